"""Forkwise desktop app (PySide6). Talks to the core only through the client API.

This package's `__init__` stays free of Qt so that the `forkwise` launcher (and the CLI
behind it) starts without PySide6.
"""
