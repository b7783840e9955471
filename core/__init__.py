"""Forkwise core: event-sourced session logs, the session store, host and clients.

Nothing in this package imports Qt; the desktop app in `forkwise.gui` builds on it.
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("forkwise")
except metadata.PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0+unknown"
