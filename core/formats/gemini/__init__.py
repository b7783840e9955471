"""Gemini CLI (google-gemini/gemini-cli) sessions, read and written."""

from .reader import READER, GeminiReader
from .writer import WRITER, GeminiWriter

__all__ = ["READER", "WRITER", "GeminiReader", "GeminiWriter"]
