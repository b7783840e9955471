"""Codex (openai/codex) rollouts: READER reads them into Forkwise sessions, WRITER writes a
Forkwise session back as a Codex thread (`codex resume <id>`)."""

from .reader import READER, CodexReader, NoSessionMeta
from .writer import WRITER, CodexWriter

__all__ = ["READER", "WRITER", "CodexReader", "CodexWriter", "NoSessionMeta"]
