"""`forkwise.core.__version__`: the installed distribution's version, read without
importing importlib.metadata (the app's start and every CLI call would pay ~20 ms)."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from forkwise import core


def test_version_is_the_installed_one_without_importlib_metadata() -> None:
    code = ("import sys, forkwise.core as c; v = c.__version__; "
            "print(v, 'importlib.metadata' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    version, imported = done.stdout.split()
    assert version == metadata.version("forkwise")
    assert imported == "False"


def test_dist_info_is_read_in_sys_path_order(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, empty = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for root, version in ((first, "1.2.3"), (second, "9.9.9")):
        info = root / f"forkwise-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: forkwise\n"
                                       f"Version: {version}\n\nVersion: not-a-header\n")
    empty.mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(empty), str(first),
                                      str(second)])
    assert core._version_from_dist_info() == "1.2.3"
    monkeypatch.setattr(sys, "path", [str(empty)])
    assert core._version_from_dist_info() is None  # then importlib.metadata answers
