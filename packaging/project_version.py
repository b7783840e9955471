"""Print the project's version, read from its one place: [project] version in pyproject.toml.

python3 packaging/project_version.py            -> 0.1.0
python3 packaging/project_version.py --debian   -> 0.1.0 (1.2.0rc1 -> 1.2.0~rc1)
python3 packaging/project_version.py --windows  -> 0.1.0.0 (numeric, four parts)
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def project_version(pyproject: Path = PYPROJECT) -> str:
    with pyproject.open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def debian_version(version: str) -> str:
    """PEP 440 -> Debian, keeping the order: dev < a < b < rc < release < post (`~` sorts first)."""
    public, _, local = version.lower().partition("+")
    v = public.replace("-", ".").replace("_", ".")
    pre = re.search(r"\.?(alpha|a|beta|b|rc|c|preview|pre)\.?(\d*)", v)
    if pre:
        kind = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}
        v = (
            v[: pre.start()]
            + f"~{kind.get(pre.group(1), pre.group(1))}{pre.group(2)}"
            + v[pre.end() :]
        )
    # A dev release sorts before everything of its release: before a pre-release's dev it is
    # `~dev` (1.0b1.dev2 -> 1.0~b1~dev2 < 1.0~b1), on its own `~~dev` (1.0.dev1 < 1.0~a1).
    v = re.sub(r"\.?dev(\d*)", r"~dev\1" if pre else r"~~dev\1", v, count=1)
    if local:
        v += "+" + local.replace("_", ".").replace("-", ".")
    if not re.fullmatch(r"[0-9][A-Za-z0-9.+~]*", v):
        raise SystemExit(f"cannot turn version {version!r} into a Debian version")
    return v


def windows_version(version: str) -> str:
    release = re.match(r"\d+(\.\d+)*", version)
    numbers = [int(n) for n in release.group(0).split(".")[:4]] if release else []
    return ".".join(str(n) for n in [*numbers, 0, 0, 0, 0][:4])


def main(argv: list[str]) -> int:
    version = project_version()
    if argv == ["--debian"]:
        print(debian_version(version))
    elif argv == ["--windows"]:
        print(windows_version(version))
    elif not argv:
        print(version)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
