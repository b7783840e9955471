"""A store over one backend, for the one store suite both backends must pass; and the
switch for long runs. (Not in conftest.py: test modules import these by name, and other
test folders have a conftest of their own.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from logdata import tree

from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session_store import SessionStore

LONG = os.environ.get("FORKWISE_LONG") == "1"


class StoreHarness:
    """A store over one backend, with what a test needs to look underneath it."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.root = tmp_path / "store"
        self._memory = MemoryBackend() if kind == "memory" else None
        self.store = self._open()

    def _open(self) -> SessionStore:
        if self._memory is not None:
            return SessionStore(self._memory)
        return SessionStore(JsonlBackend(self.root))

    def reopen(self) -> SessionStore:
        """Close the store and open a new one on the same persisted state."""
        self.store.close()
        self.store = self._open()
        return self.store

    def persisted(self) -> dict[str, Any]:
        """Everything the backend holds: file bytes for JSONL; headers and encoded lines
        as a second store reads them for memory."""
        if self._memory is None:
            return {k: v for k, v in tree(self.root).items() if k != "index.json"}
        reader = SessionStore(self._memory)
        out: dict[str, Any] = {}
        for sid in reader.ids():
            snap = reader.get(sid)
            out[sid] = (snap.header.to_record(), tuple(e.encode() for e in snap.events))
        return out

    def session_bytes(self, sid: str) -> bytes:
        assert self._memory is None
        return (self.root / "sessions" / f"{sid}.jsonl").read_bytes()

    def close(self) -> None:
        self.store.close()
