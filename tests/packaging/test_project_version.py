"""The one version (pyproject) as a Debian and a Windows version."""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "project_version.py"

spec = importlib.util.spec_from_file_location("project_version", SCRIPT)
assert spec is not None
assert spec.loader is not None
project_version = importlib.util.module_from_spec(spec)
spec.loader.exec_module(project_version)


@pytest.mark.parametrize(
    ("pep440", "debian", "windows"),
    [
        ("0.1.0", "0.1.0", "0.1.0.0"),
        ("1.2", "1.2", "1.2.0.0"),
        ("1.2.0rc1", "1.2.0~rc1", "1.2.0.0"),
        ("1.0.0a2", "1.0.0~a2", "1.0.0.0"),
        ("1.0.0b1.dev2", "1.0.0~b1~dev2", "1.0.0.0"),
        ("1.0.0.dev3", "1.0.0~~dev3", "1.0.0.0"),
        ("1.0.0c1", "1.0.0~rc1", "1.0.0.0"),
        ("1.0.0.post1", "1.0.0.post1", "1.0.0.0"),
        ("2.0.0+abc.1", "2.0.0+abc.1", "2.0.0.0"),
        ("1.2.3.4.5", "1.2.3.4.5", "1.2.3.4"),
    ],
)
def test_conversions(pep440: str, debian: str, windows: str) -> None:
    assert project_version.debian_version(pep440) == debian
    assert project_version.windows_version(pep440) == windows


def test_pre_releases_sort_before_the_release() -> None:
    if shutil.which("dpkg") is None:
        pytest.skip("needs dpkg")
    ordered = [
        "1.0.0.dev1",
        "1.0.0a1.dev1",
        "1.0.0a1",
        "1.0.0b1.dev2",
        "1.0.0b1",
        "1.0.0rc1",
        "1.0.0",
        "1.0.0+local",
        "1.0.0.post1",
        "1.0.1",
    ]
    debs = [project_version.debian_version(v) for v in ordered]
    for low, high in itertools.pairwise(debs):
        rc = subprocess.run(["dpkg", "--compare-versions", low, "lt", high], check=False)
        assert rc.returncode == 0, (low, high)


def test_script_prints_the_pyproject_version() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        expected = tomllib.load(f)["project"]["version"]
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == expected
