"""Forkwise core: event-sourced session logs, the session store, host and clients.

Nothing in this package imports Qt; the desktop app in `forkwise.gui` builds on it.
"""

from __future__ import annotations

_DIST = "forkwise"
_found: list[str] = []


def __getattr__(name: str) -> str:
    # `__version__` is looked up on demand, and without importlib.metadata when the
    # installed metadata file can be read directly: that module costs 15-25 ms to import
    # (email, csv, zipfile…), which every `forkwise sessions …` call and every start of
    # the app (the host's hello reply carries the version) would pay otherwise.
    if name == "__version__":
        if not _found:
            _found.append(_version_from_dist_info() or _version_from_metadata())
        return _found[0]
    raise AttributeError(name)


def _version_from_dist_info() -> str | None:
    """`Version:` from the first `forkwise-*.dist-info/METADATA` on sys.path (where
    importlib.metadata would find it first); None when there is none to read."""
    import os
    import sys

    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as it:
                names = [e.name for e in it
                         if e.name.startswith(_DIST + "-") and e.name.endswith(".dist-info")]
        except OSError:  # not a directory (a zip, a missing path)
            continue
        for dist_info in sorted(names):
            path = os.path.join(entry or ".", dist_info, "METADATA")
            try:
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        if not line.strip():
                            break  # the end of the headers
                        key, _, value = line.partition(":")
                        if key == "Version":
                            return value.strip()
            except OSError:
                continue
    return None


def _version_from_metadata() -> str:
    from importlib import metadata

    try:
        return metadata.version(_DIST)
    except metadata.PackageNotFoundError:  # a checkout that is not installed
        return "0+unknown"
