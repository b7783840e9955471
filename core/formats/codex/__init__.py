"""Codex (openai/codex) rollouts: READER reads them into Forkwise sessions, WRITER writes a
Forkwise session back as a Codex thread (`codex resume <id>`)."""

from .reader import READER, CodexReader, NoSessionMeta

__all__ = ["READER", "CodexReader", "NoSessionMeta"]
