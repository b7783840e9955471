"""What ships beside the program without a build: the manual page, the licence, the desktop
integration files. Fast (no bundle): each check runs the tool a distribution would run."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAN = ROOT / "packaging" / "forkwise.1"


def rendered_man() -> str:
    if shutil.which("man") is None:
        pytest.skip("needs man (man-db)")
    proc = subprocess.run(
        ["man", "--warnings", "-E", "UTF-8", "-l", str(MAN)],
        env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # groff warnings
    return proc.stdout


@pytest.mark.parametrize(
    "needle",
    [
        "forkwise host",
        "--listen",
        "--token-file",
        "--allow-remote",
        "FORKWISE_API_KEY",
        "FORKWISE_TOKEN",
        "FORKWISE_STORE",
        "FORKWISE_CONFIG_DIR",
        "~/.config/forkwise/settings.json",
        "~/.config/Forkwise/forkwise.conf",
        "~/.local/share/forkwise/store/",
        "forkwise[gui]",
        "FILE",
        "export",
        "delete",
    ],
)
def test_manual_page_covers(needle: str) -> None:
    text = rendered_man().replace("\u2010\n", "").replace("\u2010", "-")
    assert needle in " ".join(text.split()).replace("- ", "-"), needle


def test_licence_is_mit_for_the_forkwise_authors() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The Forkwise authors" in text


RESOURCES = ROOT / "resources"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"needs {name}")
    return path


def test_appstream_metainfo_validates_and_names_this_version() -> None:
    metainfo = RESOURCES / "org.forkwise.Forkwise.metainfo.xml"
    proc = subprocess.run([tool("appstreamcli"), "validate", "--no-net", str(metainfo)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = metainfo.read_text()
    with (ROOT / "pyproject.toml").open("rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert f'<release version="{version}"' in text
    assert "<launchable type=\"desktop-id\">forkwise.desktop</launchable>" in text
    assert "<mediatype>application/x-forkwise-session</mediatype>" in text


def test_desktop_entry_opens_files_of_the_session_type() -> None:
    desktop = RESOURCES / "forkwise.desktop"
    proc = subprocess.run([tool("desktop-file-validate"), str(desktop)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not proc.stdout.strip(), proc.stdout
    lines = desktop.read_text().splitlines()
    assert "Exec=forkwise %F" in lines
    assert "MimeType=application/x-forkwise-session;application/x-codex-session;" in lines


def test_the_mime_type_recognises_a_session_file_by_its_header(tmp_path: Path) -> None:
    """update-mime-database compiles the type as a desktop would; its magic holds the
    session header every Forkwise session file starts with."""
    packages = tmp_path / "mime" / "packages"
    packages.mkdir(parents=True)
    shutil.copy(RESOURCES / "forkwise-mime.xml", packages / "forkwise.xml")
    proc = subprocess.run([tool("update-mime-database"), str(tmp_path / "mime")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    types = (tmp_path / "mime" / "types").read_text().split()
    assert types == ["application/x-codex-session", "application/x-forkwise-session"]
    magic = (tmp_path / "mime" / "magic").read_bytes()
    assert b'{"type":"session",' in magic
    assert b'"type":"session_meta"' in magic
    globs = (tmp_path / "mime" / "globs2").read_text()
    assert "application/x-codex-session:rollout-*.jsonl" in globs
    assert ":*.jsonl\n" not in globs  # no claim on every JSON Lines file


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["forkwise", "ses"], {"sessions"}),
        (["forkwise", "h"], {"host"}),
        (["forkwise", "sessions", "f"], {"fork"}),
        (["forkwise", "--store", "/tmp", "sessions", "fork", "--rep"], {"--replace"}),
        (["forkwise", "host", "--li"], {"--listen"}),
        (["forkwise", "--self"], {"--self-test"}),
        (["forkwise", "sessions", "e"], {"export"}),
        (["forkwise", "sessions", "export", "x", "--to", "c"], {"claude", "codex"}),
        (["forkwise", "sessions", "import", "--fr"], {"--from"}),
    ],
)
def test_bash_completion(words: list[str], expected: set[str], tmp_path: Path) -> None:
    script = (
        f"source {RESOURCES / 'completions' / 'forkwise.bash'}\n"
        f"COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _forkwise\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run([tool("bash"), "--norc", "-c", script], capture_output=True,
                          text=True, timeout=60, check=True, cwd=tmp_path)  # no file to offer
    assert set(proc.stdout.split()) == expected


def test_zsh_completion_parses() -> None:
    proc = subprocess.run([tool("zsh"), "-n", str(RESOURCES / "completions" / "_forkwise")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
