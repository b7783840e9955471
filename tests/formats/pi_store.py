"""Reading pi fixtures, and putting what is read through the real Forkwise store (to
prove the records valid)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_fixtures import settled

from forkwise.core.formats.base import ImportedSession
from forkwise.core.formats.pi import READER
from forkwise.core.log.events import Event
from forkwise.core.log.replay import Replay
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore


def stored_events(imported: ImportedSession) -> list[Event]:
    return [
        Event.build(
            seq, r["type"], {k: v for k, v in r.items() if k not in ("type", "ts")}, ts=r["ts"]
        )
        for seq, r in enumerate(imported.events, start=1)
    ]


def store_and_replay(root: Path, imported: ImportedSession) -> tuple[Replay, list[dict[str, Any]]]:
    """Import the session whole into a JSONL store, read it back from disk in a fresh store,
    and replay it; also returns the stored records."""
    header = SessionHeader(
        id=imported.id,
        created=imported.created,
        cwd=imported.cwd,
        meta={"source": imported.source.to_meta()},
    )
    store = SessionStore(JsonlBackend(root))
    try:
        store.import_session(header, stored_events(imported))
    finally:
        store.close()
    fresh = SessionStore(JsonlBackend(root, writable=False))
    try:
        session = fresh.get(imported.id)
        return session.replay(), [e.to_record() for e in session.events]
    finally:
        fresh.close()


def without_src(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "src"} for e in events]


def read(path: Path) -> list[ImportedSession]:
    return READER.read(settled(path))


def messages(session: ImportedSession) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]
