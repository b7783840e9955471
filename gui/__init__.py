"""Forkwise desktop app (PySide6). Talks to the core only through the client API."""
