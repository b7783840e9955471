"""How much a notice matters: the one definition the notifier, the banner and the notice
share (Qt-free)."""

from __future__ import annotations

from enum import StrEnum


class Level(StrEnum):
    """A notice's level: its banner's colour; an error is also logged as a warning."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


INFO, WARNING, ERROR = Level.INFO, Level.WARNING, Level.ERROR
