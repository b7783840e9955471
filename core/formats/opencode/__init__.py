"""OpenCode (sst/opencode, `opencode-ai`) sessions, read and written."""

from .reader import READER, OpenCodeReader
from .writer import WRITER, OpenCodeWriter

__all__ = ["READER", "WRITER", "OpenCodeReader", "OpenCodeWriter"]
