"""pi (badlogic/pi-mono, `@mariozechner/pi-coding-agent`) sessions, read and written."""

from .reader import READER, PiReader
from .writer import WRITER, PiWriter

__all__ = ["READER", "WRITER", "PiReader", "PiWriter"]
