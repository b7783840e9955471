"""The .deb's Depends, read off the bundle: the system libraries its programs link to.

    python3 packaging/deb_depends.py dist/forkwise     -> libc6 (>= 2.34), libdbus-1-3, …

The bundle carries no library of the build system (packaging/forkwise.spec drops them), so
every NEEDED entry of its ELF files that no file of the bundle provides is a system library:
`ldconfig -p` finds it on the build machine and `dpkg -S` names its package. libc6 gets the
newest GLIBC_ symbol version referenced. Packages renamed by Debian's 64-bit time_t
transition (Debian 13, Ubuntu 24.04) get their new name as an alternative. A library not
found fails the build: the package would not install or would not start.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

#: package on the build system (Debian 12) -> its name after the time_t transition
T64 = {
    "libglib2.0-0": "libglib2.0-0t64",
    "libssl3": "libssl3t64",
    "libpng16-16": "libpng16-16t64",
    "libcurl4": "libcurl4t64",
    "libgnutls30": "libgnutls30t64",
}
#: libraries of the C library itself (libc6 covers them)
LIBC = {"libc6"}
#: loaded with dlopen, so absent from NEEDED, and needed on a real display
DLOPENED = ("libgl1", "libegl1")


def elf_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed_and_glibc(path: Path) -> tuple[set[str], set[tuple[int, ...]]]:
    dyn = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True,
                         check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
    ver = subprocess.run(["readelf", "-VW", str(path)], capture_output=True, text=True,
                         check=True).stdout
    glibc = {tuple(int(n) for n in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", ver)}
    return needed, glibc


def library_paths() -> dict[str, str]:
    """soname -> path, from the dynamic linker's cache (this machine's architecture)."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    want64 = sys.maxsize > 2**32
    paths: dict[str, str] = {}
    for line in out.splitlines()[1:]:
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and ("64" in m.group(2)) == want64:  # (libc6,x86-64), (libc6,AArch64) ...
            paths.setdefault(m.group(1), m.group(3))
    return paths


def owning_packages(paths: list[str]) -> dict[str, str]:
    """path -> package, with one dpkg-query for all (/lib and /usr/lib are the same folder
    on a merged-/usr system, but dpkg knows each file under one of the two names)."""
    variants = {p: [p, str(Path(p).resolve())] for p in paths}
    for forms in variants.values():
        forms += ["/usr" + f for f in forms if not f.startswith("/usr/")]
        forms += [f.removeprefix("/usr") for f in forms if f.startswith("/usr/")]
    queried = sorted({f for forms in variants.values() for f in forms})
    out = subprocess.run(["dpkg-query", "-S", *queried], capture_output=True, text=True,
                         check=False).stdout
    owner: dict[str, str] = {}
    for line in out.splitlines():
        package, _, path = line.partition(": ")
        owner[path.strip()] = package.split(":")[0].split(",")[0].strip()
    found: dict[str, str] = {}
    for path, forms in variants.items():
        for form in forms:
            if form in owner:
                found[path] = owner[form]
                break
    return found


def depends(bundle: Path) -> str:
    provided = {p.name for p in bundle.rglob("*")}
    needed: set[str] = set()
    glibc: set[tuple[int, ...]] = set()
    for elf in elf_files(bundle):
        n, g = needed_and_glibc(elf)
        needed |= n
        glibc |= g
    paths = library_paths()
    external = sorted(needed - provided)
    owners = owning_packages([paths[s] for s in external if s in paths])
    missing = [s for s in external if owners.get(paths.get(s, "")) is None]
    packages = {owners[paths[s]] for s in external if s not in missing}
    if missing:
        raise SystemExit(f"no package of this system provides: {', '.join(missing)}")
    newest = ".".join(str(n) for n in max(glibc)) if glibc else None
    fields = [f"libc6 (>= {newest})" if newest else "libc6"]
    for package in sorted((packages - LIBC) | set(DLOPENED)):
        fields.append(f"{package} | {T64[package]}" if package in T64 else package)
    return ", ".join(fields)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(depends(Path(sys.argv[1])))
