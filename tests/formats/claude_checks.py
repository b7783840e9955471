"""Checks shared by the Claude Code format tests: events through the real store and replay."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from forkwise.core.formats.base import ExportInput, ImportedSession
from forkwise.core.log.events import Event
from forkwise.core.log.replay import replay
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore


def stored(sessions: Sequence[ImportedSession], store_dir: Path) -> dict[str, Any]:
    """Store every session as it is (bracket rules, required fields and unique message ids
    checked by the store), read it back from disk, and replay it."""
    store = SessionStore(JsonlBackend(store_dir))
    for s in sessions:
        events = [Event.from_record({"seq": n, **record}) for n, record in enumerate(s.events, 1)]
        header = SessionHeader(
            id=s.id,
            created=s.created,
            cwd=s.cwd,
            meta=MappingProxyType({"source": s.source.to_meta()}),
        )
        store.import_session(header, events)
    store.close()
    fresh = SessionStore(JsonlBackend(store_dir, writable=False))
    return {s.id: replay(fresh.get(s.id).events) for s in sessions}


def convo(session: ImportedSession) -> list[tuple[str, str, list[tuple[str, Any]]]]:
    """(role, text, [(tool, args)]) of each message: what a round trip must keep."""
    out = []
    for e in session.events:
        if e["type"] == "message":
            text = "".join(p["text"] for p in e["parts"] if p["type"] == "text")
            calls = [(p["name"], p["args"]) for p in e["parts"] if p["type"] == "tool_call"]
            out.append((e["role"], text, calls))
    return out


def without_src(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "src"} for e in events]


def types(session: ImportedSession) -> list[str]:
    return [e["type"] for e in session.events]


def export_input(s: ImportedSession, extra: Sequence[dict[str, Any]] = ()) -> ExportInput:
    records = [*s.events, *extra]
    events = [{"seq": n, **r} for n, r in enumerate(records, 1)]
    return ExportInput(
        session_id=s.id,
        cwd=s.cwd,
        title=s.title,
        created=s.created,
        events=events,
        sources={s.source.id: s.source},
    )
