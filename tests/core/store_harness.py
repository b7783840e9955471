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
from forkwise.core.store.backends.postgres import PostgresBackend
from forkwise.core.store.session_store import SessionStore

LONG = os.environ.get("FORKWISE_LONG") == "1"


class StoreHarness:
    """A store over one backend, with what a test needs to look underneath it."""

    def __init__(self, kind: str, tmp_path: Path, url: str | None = None) -> None:
        self.kind = kind
        #: the database of the "postgres" kind
        self.url = url
        self.root = tmp_path / "store"
        self._memory = MemoryBackend() if kind == "memory" else None
        self.store = self._open()

    def _open(self) -> SessionStore:
        if self._memory is not None:
            return SessionStore(self._memory)
        if self.url is not None:
            return SessionStore(PostgresBackend(self.url))
        return SessionStore(JsonlBackend(self.root))

    def reopen(self) -> SessionStore:
        """Close the store and open a new one on the same persisted state."""
        self.store.close()
        self.store = self._open()
        return self.store

    def persisted(self) -> dict[str, Any]:
        """Everything the backend holds: file bytes for JSONL; headers and encoded lines
        as a second store reads them for memory; every row for PostgreSQL."""
        if self.url is not None:
            return database_rows(self.url)
        if self._memory is None:
            return {k: v for k, v in tree(self.root).items() if k != "index.json"}
        reader = SessionStore(self._memory)
        out: dict[str, Any] = {}
        for sid in reader.ids():
            snap = reader.get(sid)
            out[sid] = (snap.header.to_record(), tuple(e.encode() for e in snap.events))
        return out

    def session_bytes(self, sid: str) -> bytes:
        """The session as the JSONL backend writes it: its header line, then its lines."""
        assert self._memory is None
        if self.url is not None:
            header, lines = database_rows(self.url)[sid][:2]
            return b"".join(line + b"\n" for line in (header, *lines))
        return (self.root / "sessions" / f"{sid}.jsonl").read_bytes()

    def close(self) -> None:
        self.store.close()


def database_rows(url: str) -> dict[str, Any]:
    """Every row the PostgreSQL backend keeps, read over a connection of its own."""
    import psycopg

    with psycopg.connect(url) as conn:
        sessions = conn.execute(
            "SELECT id, header, parent, events, updated, summary FROM forkwise_sessions"
        ).fetchall()
        events = conn.execute(
            "SELECT session, seq, type, line FROM forkwise_events ORDER BY session, seq"
        ).fetchall()
    out: dict[str, Any] = {}
    for sid, header, *rest in sessions:
        lines = tuple(bytes(line) for s, _, _, line in events if s == sid)
        out[sid] = (bytes(header), lines, *rest)
    orphans = [(s, seq) for s, seq, _, _ in events if s not in out]
    if orphans:  # events of no session: never written by a correct backend
        out["(orphans)"] = orphans
    return out
