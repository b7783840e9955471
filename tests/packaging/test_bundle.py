"""The packaged app: PyInstaller bundle, Debian package, and clean-root installs (Debian 12,
Debian 13, Ubuntu 24.04).

Slow by design (the slowest tests of the suite): building the bundle takes ~20-60 s plus a
one-time build environment, the .deb ~60 s (xz; twice, for the reproducibility check), the
clean-root installs ~2 min for the three bases with their cache warm (each debootstrap adds
~30-40 s the first time). Each stage is the documented command in packaging/README.md, run as
is. Set FORKWISE_SKIP_CLEANROOT=1 to leave out the clean-root installs (they need root and the
Debian and Ubuntu mirrors).
"""

from __future__ import annotations

import fcntl
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from forkwise.core.runtime.settings import ProviderSettings, save_settings

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
BUNDLE = DIST / "forkwise"
BUILD_TIMEOUT = 1800

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux packaging"),
]

REQUIRED_DEPENDS = {
    "libgl1",
    "libegl1",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
    "libfontconfig1",
    "libdbus-1-3",
    "libxcb1",
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-image0",
    "libxcb-keysyms1",
    "libxcb-render-util0",
    "libxcb-shape0",
    "libxcb-xkb1",
}
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
#: the vendors' SDKs (anthropic, openai, google-genai with google-auth, pydantic) took the
#: bundle from under 120 MB to 134 MB. `cryptography` (~12 MB) was in it before them and
#: stays: the keyring's Secret Service backend needs it (see packaging/forkwise.spec)
MAX_BUNDLE_MB = 140
SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"


def project_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def debian_version() -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "project_version.py"), "--debian"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


@pytest.fixture(scope="module", autouse=True)
def packaging_lock() -> Iterator[None]:
    """Hold the checkout's packaging lock for the whole module (dist/ and build/ are shared
    with any other build or test run in this checkout); the scripts then skip taking it."""
    lock_path = ROOT / "build" / ".packaging.lock"
    lock_path.parent.mkdir(exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a packaging script; on failure, show its output in the assertion."""
    proc = subprocess.run(
        ["bash", *args],
        cwd=ROOT,
        env={**os.environ, "FORKWISE_PACKAGING_LOCK_HELD": "1"},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def app_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        QT_LOGGING_RULES="qt.qpa.*=false",
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    env.pop("FORKWISE_STORE", None)
    return env


@pytest.fixture(scope="module")
def bundle() -> Path:
    run_script("packaging/build_bundle.sh")
    assert (BUNDLE / "forkwise").is_file()
    return BUNDLE


@pytest.fixture(scope="module")
def deb(bundle: Path) -> Path:
    run_script("packaging/build_deb.sh", "--no-bundle")
    debs = sorted(DIST.glob("forkwise_*.deb"))
    assert len(debs) == 1, debs
    return debs[0]


def dpkg_deb(*args: str) -> str:
    return subprocess.run(["dpkg-deb", *args], check=True, capture_output=True, text=True).stdout


def test_the_build_keeps_pyinstaller_s_cache_in_the_checkout(bundle: Path) -> None:
    # ~/.cache/pyinstaller is shared by every checkout: two builds at once corrupt it
    cache = ROOT / "build" / "pyinstaller-config"
    assert cache.is_dir(), f"no PyInstaller cache in {cache}"
    assert any(cache.iterdir()), f"the PyInstaller cache in {cache} is empty"


def test_bundle_self_test(bundle: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(bundle / "forkwise"), "--self-test"],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bundle_version(bundle: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(bundle / "forkwise"), "--version"],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == f"forkwise {project_version()}"


def test_bundle_cli_on_an_empty_store(bundle: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    proc = subprocess.run(
        [str(bundle / "forkwise"), "sessions", "list", "--json", "--store", str(store)],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == "[]"


def test_bundle_is_trimmed(bundle: Path) -> None:
    files = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()]
    size_mb = sum(p.stat().st_size for p in files) / 2**20
    assert size_mb <= MAX_BUNDLE_MB, f"bundle is {size_mb:.0f} MB"
    names = {p.name for p in bundle.rglob("*")}
    for unwanted in ("libQt6Qml", "libQt6Quick", "libQt6Network", "libQt6WebEngine", "QtQml"):
        assert not any(n.startswith(unwanted) for n in names), unwanted
    assert not list(bundle.rglob("translations/*.qm"))
    assert not [p for p in bundle.rglob("*") if p.is_symlink() and not p.exists()]
    internal = bundle / "_internal"
    assert (internal / "resources" / "icons" / "forkwise.svg").is_file()
    assert (internal / "resources" / "forkwise.desktop").is_file()


def test_deb_control_fields(deb: Path) -> None:
    arch = subprocess.run(
        ["dpkg", "--print-architecture"], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert deb.name == f"forkwise_{debian_version()}_{arch}.deb"
    fields = {
        key: dpkg_deb("-f", str(deb), key).strip()
        for key in ("Package", "Version", "Architecture", "Depends", "Installed-Size")
    }
    assert fields["Package"] == "forkwise"
    assert fields["Version"] == debian_version()
    depends = {d.split()[0] for d in fields["Depends"].split(",")}
    assert depends >= REQUIRED_DEPENDS, REQUIRED_DEPENDS - depends
    assert int(fields["Installed-Size"]) > 10_000  # KiB
    # No maintainer scripts: nothing to run on install or removal.
    info = dpkg_deb("-I", str(deb))
    for script in ("preinst", "postinst", "prerm", "postrm"):
        assert f" {script} " not in info


def test_deb_contents(deb: Path) -> None:
    listing = dpkg_deb("-c", str(deb)).splitlines()
    entries = {}
    for line in listing:
        perms, owner, _size, _date, _time, path, *rest = line.split()
        entries[path] = (perms, owner, rest)
    assert all(owner == "root/root" for _p, owner, _r in entries.values())
    assert entries["./usr/lib/forkwise/forkwise"][0] == "-rwxr-xr-x"
    perms, _owner, rest = entries["./usr/bin/forkwise"]
    assert perms.startswith("l")
    assert rest == ["->", "../lib/forkwise/forkwise"]
    assert "./usr/share/applications/forkwise.desktop" in entries
    assert "./usr/share/icons/hicolor/scalable/apps/forkwise.svg" in entries
    assert "./usr/share/man/man1/forkwise.1.gz" in entries
    assert "./usr/share/doc/forkwise/copyright" in entries
    for path in (
        "./usr/share/metainfo/org.forkwise.Forkwise.metainfo.xml",
        "./usr/share/mime/packages/forkwise.xml",
        "./usr/share/bash-completion/completions/forkwise",
        "./usr/share/zsh/vendor-completions/_forkwise",
    ):
        assert path in entries, path
    libraries = [p for p in entries if p.startswith("./usr/lib/forkwise/") and ".so" in Path(p).name]
    assert libraries
    assert all(entries[p][0].startswith("-rw-r--r--") for p in libraries if entries[p][0][0] == "-")
    for size in ICON_SIZES:
        assert f"./usr/share/icons/hicolor/{size}x{size}/apps/forkwise.png" in entries
    # Nothing outside /usr: the package owns no /opt (its purge removed /opt itself)
    outside = [p for p in entries if not p.startswith("./usr/") and p != "./"]
    assert outside == []


def test_the_bundle_carries_no_system_library(deb: Path) -> None:
    """Every library the system has is used from the system (its security updates apply):
    what the bundle links to and does not carry is in Depends, OpenSSL included."""
    names = {Path(line.split()[5]).name for line in dpkg_deb("-c", str(deb)).splitlines()}
    for system in ("libssl.so.3", "libcrypto.so.3", "libglib-2.0.so.0", "libfontconfig.so.1",
                   "libfreetype.so.6", "libdbus-1.so.3", "libX11.so.6", "libxcb-xkb.so.1",
                   "libxkbcommon.so.0", "libstdc++.so.6", "libexpat.so.1", "libz.so.1"):
        assert system not in names, system
    depends = dpkg_deb("-f", str(deb), "Depends")
    for package in ("libssl3 | libssl3t64", "libglib2.0-0 | libglib2.0-0t64", "libfontconfig1",
                    "libdbus-1-3", "libstdc++6", "libexpat1", "zlib1g"):
        assert package in depends, package


def test_copyright_names_every_bundled_distribution(deb: Path, tmp_path: Path) -> None:
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path)], check=True)
    text = (tmp_path / "usr/share/doc/forkwise/copyright").read_text()
    assert text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert "Copyright: 2026 The Forkwise authors\nLicense: MIT" in text
    infos = sorted((tmp_path / "usr/lib/forkwise/_internal").glob("*.dist-info"))
    assert len(infos) > 10
    for info in infos:
        assert f"_internal/{info.name}/*" in text, info.name
    for licence in ("LGPL-3.0-only", "PSF-2.0", "BSD-3-Clause", "MPL-2.0 AND (Apache-2.0 OR MIT)"):
        assert f"License: {licence}" in text, licence
    assert "/usr/share/common-licenses/LGPL-3" in text
    assert "License: UNKNOWN" not in text


def test_deb_steps_are_reproducible(deb: Path, tmp_path: Path) -> None:
    """The same bundle packed twice (one SOURCE_DATE_EPOCH): the same bytes. The bundle's own
    reproducibility (two PyInstaller runs) is measured by hand: packaging/README.md."""
    first = deb.read_bytes()
    os.utime(BUNDLE / "forkwise")  # a newer file time must not change the package
    run_script("packaging/build_deb.sh", "--no-bundle")
    assert deb.read_bytes() == first


@pytest.mark.skipif(os.environ.get("FORKWISE_SKIP_CLEANROOT") == "1", reason="asked to skip")
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root (debootstrap, chroot)"
)
@pytest.mark.skipif(shutil.which("chroot") is None, reason="needs chroot")
def test_clean_debian_root_install(deb: Path) -> None:
    proc = run_script("packaging/test_install.sh", str(deb))
    assert "RESULT " in proc.stdout
    assert "PASS" in proc.stderr


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA), made with the openssl tool."""
    cert, key = folder / "endpoint.crt", folder / "endpoint.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=forkwise test endpoint", "-addext", "subjectAltName=IP:127.0.0.1",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


class _Completion(http.server.BaseHTTPRequestHandler):
    """POST /v1/chat/completions -> one streamed completion (server-sent events)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chunk = {"choices": [{"index": 0, "finish_reason": "stop", "delta": {
            "role": "assistant", "content": "answered over TLS"}}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def tls_endpoint(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    cert, key = make_certificate(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Completion)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare (a private mount namespace)",
)
@pytest.mark.skipif(not Path(SYSTEM_CA).is_file(), reason=f"no {SYSTEM_CA}")
def test_https_trusts_the_system_s_certificates(
    bundle: Path, tls_endpoint: tuple[str, Path], tmp_path: Path
) -> None:
    """The bundled app verifies a model endpoint against the system's CA store (what
    ca-certificates and an administrator put there), not against certifi's copy: an endpoint
    whose CA is only in the system store answers; without it there, verification fails."""
    url, cert = tls_endpoint
    env = app_env(tmp_path)
    env.update(FORKWISE_CONFIG_DIR=str(tmp_path / "config"), FORKWISE_API_KEY="sk-test-tls")
    env.pop("SSL_CERT_FILE", None)
    env.pop("SSL_CERT_DIR", None)
    save_settings(ProviderSettings(kind="openai", base_url=url, model="m-tls"),
                  tmp_path / "config" / "settings.json")
    store = tmp_path / "store"
    exe = str(bundle / "forkwise")

    def prompt(system_ca: Path) -> subprocess.CompletedProcess[str]:
        """A new session and one prompt, with SYSTEM_CA replaced by `system_ca` in a
        mount namespace of its own (the machine's store is not touched)."""
        script = (
            f'mount --bind "$1" {SYSTEM_CA} && id=$("$2" sessions new --store "$3") '
            '&& exec "$2" sessions prompt "$id" "hello" --store "$3"'
        )
        return subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
             str(system_ca), exe, str(store)],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )

    trusted = prompt(cert)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert "answered over TLS" in trusted.stdout
    untrusted = prompt(Path("/dev/null"))  # an empty system store: nothing verifies
    assert "answered over TLS" not in untrusted.stdout
    assert "certif" in (untrusted.stdout + untrusted.stderr).lower(), untrusted.stdout + untrusted.stderr
