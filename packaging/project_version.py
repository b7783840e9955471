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
    """PEP 440 -> Debian: pre- and dev-releases sort before the release (`~`)."""
    public, _, local = version.lower().partition("+")
    v = public.replace("-", ".")
    v = re.sub(r"\.?(alpha|a|beta|b|rc|c|preview|pre)(\d*)", r"~\1\2", v, count=1)
    v = re.sub(r"\.?dev(\d*)", r"~dev\1", v, count=1)
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
