"""Claude Code sessions: `READER` reads `~/.claude/projects`, `WRITER` writes a session back."""

from .reader import READER, ClaudeReader
from .writer import WRITER, ClaudeWriter

__all__ = ["READER", "WRITER", "ClaudeReader", "ClaudeWriter"]
