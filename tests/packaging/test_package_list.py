"""Every Python package in core/ and gui/ is listed in pyproject.toml, so that a wheel (and
the .deb built from it) carries all of it; an editable install would hide a missing one."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for top, name in (("core", "forkwise.core"), ("gui", "forkwise.gui")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([name, *rel.parts]))
    assert found == listed
