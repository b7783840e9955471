"""Gemini CLI and OpenCode from the npm registry, for the tests that drive the real tools.

Each is installed once, as pinned by `<name>_node/package.json` (exact versions) and its
lock file, into a cache
folder outside the checkout (`$XDG_CACHE_HOME/forkwise-tests/npm/<name>-<lock digest>`,
else under `~/.cache`). Without node or npm, or when the registry cannot be reached, the
tests that need them are skipped (saying why); a tool that installs but then fails fails
its test.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BINARIES = {"gemini": "gemini", "opencode": "opencode"}


def cache_dir(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = HERE / f"{name}_node"
    pinned = (folder / "package.json").read_bytes() + (folder / "package-lock.json").read_bytes()
    lock = hashlib.sha256(pinned).hexdigest()
    return Path(base) / "forkwise-tests" / "npm" / f"{name}-{lock[:12]}"


def ensure(name: str) -> Path:
    """The pinned tool's executable (`gemini`, `opencode`), installing it on first use."""
    target = cache_dir(name)
    binary = target / "node_modules" / ".bin" / BINARIES[name]
    if binary.exists():
        return binary
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip(f"node and npm are needed to install {name}")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-install-", dir=target.parent))
    for file in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / f"{name}_node" / file, work / file)
    try:
        done = subprocess.run(
            # not `npm ci`: npm 11 refuses opencode-ai's lock (its per-platform optional
            # packages are left out of it), and the versions are exact anyway
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"installing {name} from the npm registry took too long")
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        if _offline(done.stderr):
            pytest.skip(f"the npm registry cannot be reached to install {name}")
        raise AssertionError(f"npm install for {name} failed:\n{done.stderr[-2000:]}")
    try:
        work.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return binary


def _offline(stderr: str) -> bool:
    words = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network")
    return any(w in stderr for w in words)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
