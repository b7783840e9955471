"""Forkwise core: event-sourced session logs, the session store, host and clients.

Nothing in this package imports Qt; the desktop app in `forkwise.gui` builds on it.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # `__version__` is looked up on demand: importlib.metadata costs ~25 ms at start-up,
    # which every `forkwise sessions …` call would pay otherwise.
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("forkwise")
        except metadata.PackageNotFoundError:  # a checkout that is not installed
            return "0+unknown"
    raise AttributeError(name)
