"""The source distribution and the wheel, built by the setuptools pyproject.toml asks for:
the licence travels in both, the sdist carries what a distribution rebuilds the desktop
integration and runs the tests from, and setuptools has nothing deprecated to warn about."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    tmp = tmp_path_factory.mktemp("sdist")
    backend = tmp / "backend"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--target", str(backend), "setuptools>=77", "wheel"],
        check=True, capture_output=True, text=True, timeout=600,
    )
    # a copy of the tree, as a clone has it: the build writes build/ and *.egg-info in it
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".venv*", "build", "dist", ".git", "__pycache__", "*.egg-info", ".pytest_cache",
        ".ruff_cache", ".mypy_cache"))
    out = tmp / "out"
    out.mkdir()
    code = (
        "import sys; from setuptools import build_meta as b; out = sys.argv[1]; "
        "print(b.build_sdist(out)); print(b.build_wheel(out))"  # setuptools rewrites sys.argv
    )
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", code, str(out)],
        cwd=src, env={"PYTHONPATH": str(backend), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sdist = next(out.glob("forkwise-*.tar.gz"))
    wheel = next(out.glob("forkwise-*.whl"))
    return sdist, wheel, proc.stdout + proc.stderr


def test_no_setuptools_deprecation(built: tuple[Path, Path, str]) -> None:
    log = built[2]
    assert "Deprecat" not in log, [line for line in log.splitlines() if "eprecat" in line]


def test_sdist_carries_licence_tests_resources_and_man_page(built: tuple[Path, Path, str]) -> None:
    with tarfile.open(built[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for path in ("LICENSE", "packaging/forkwise.1", "packaging/build_deb.sh",
                 "resources/forkwise.desktop", "resources/org.forkwise.Forkwise.metainfo.xml",
                 "resources/forkwise-mime.xml", "resources/completions/forkwise.bash",
                 "resources/icons/forkwise.svg", "tests/conftest.py",
                 "tests/cli/test_launcher.py", "tests/packaging/test_docs.py"):
        assert path in names, path
    assert not [n for n in names if n.endswith(".pyc")]


def test_wheel_carries_the_licence_and_its_spdx_expression(built: tuple[Path, Path, str]) -> None:
    with zipfile.ZipFile(built[1]) as whl:
        names = whl.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = whl.read(info).decode()
        licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        assert whl.read(licence) == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()
