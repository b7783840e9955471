"""Run mypy and the import contract on the import names the wheel installs.

The folders are `core/` and `gui/` in the checkout; mypy resolves packages by path, so a
throw-away tree of symlinks under build/typecheck gives it the installed layout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    tree = ROOT / "build" / "typecheck" / "forkwise"
    tree.mkdir(parents=True, exist_ok=True)
    for name in ("core", "gui"):
        link = tree / name
        if not link.is_symlink():
            if link.exists():
                link.unlink()
            link.symlink_to(ROOT / name, target_is_directory=True)
    env = dict(os.environ, MYPYPATH=str(tree.parent))
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--explicit-package-bases",
        "-p",
        "forkwise.core",
        "-p",
        "forkwise.gui",
    ]
    status = subprocess.call(cmd, env=env, cwd=tree.parent)
    if "--mypy-only" not in sys.argv:
        lint = [
            str(Path(sys.executable).with_name("lint-imports")),
            str(ROOT / "pyproject.toml"),
        ]
        env_imports = dict(os.environ, PYTHONPATH=str(tree.parent))
        status = status or subprocess.call(lint, env=env_imports, cwd=ROOT)
    return status


if __name__ == "__main__":
    sys.exit(main())
