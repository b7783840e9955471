"""The export verb: a session written as a native session of Claude Code, Codex or pi, so
that a fork made here can be continued in the agent it came from — or as a document to
read and share (Markdown, HTML: `documents.py`).

Runs on the host's store worker; the CLI and the app reach it through `Host.export`. The
formats write; this module gathers what they need (the session's events, the sources its
shared lines came from, its model) and records in the session's own log where it was
sent, as a `plugin/forkwise/export` event (log-only: replay and forks ignore it) — except
in an imported session, whose log must keep following its source. The import ledger
remembers every file written (the tool, its new session id -> this session), so that the
import that reads it back (the app watches the agents' folders) stores it beneath this
session, relation "continued", instead of as a session of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forkwise.core.formats.base import ExportInput, SourceRef, Writer
from forkwise.core.host.documents import export_document
from forkwise.core.host.import_ledger import EXPORT_EVENT, ImportLedger
from forkwise.core.host.importing import format_module
from forkwise.core.log.events import MODEL_SELECT, now_ts
from forkwise.core.reading import DOCUMENTS
from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]


def writer(tool: str) -> Writer:
    found: Writer = format_module(tool, "write").WRITER
    return found


def export_input(store: SessionStore, session_id: str) -> ExportInput:
    """What a writer needs of a session: its records, and where the lines it shares with
    an imported source live (from the `meta.source` of it and its ancestors)."""
    snap = store.get(session_id)
    records = [e.to_record() for e in snap.events]
    sources: dict[str, SourceRef] = {}
    header, seen = snap.header, {session_id}
    while True:
        ref = SourceRef.from_meta(header.meta.get("source"))
        if ref is not None:
            sources.setdefault(ref.id, ref)
        parent = header.parent_session
        if parent is None or parent in seen or not store.exists(parent):
            break
        seen.add(parent)
        header = store.get(parent).header
    model = next((r for r in reversed(records) if r["type"] == MODEL_SELECT), None)
    title = store.summary(session_id).title
    return ExportInput(
        session_id=session_id,
        cwd=snap.header.cwd,
        title=title,
        created=snap.header.created,
        events=records,
        sources=sources,
        model=model,
    )


def export_session(
    store: SessionStore,
    session_id: str,
    tool: str,
    out: str | None,
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    ledger: ImportLedger | None = None,
    assets: bool = False,
) -> Json:
    """Write the session for `tool`; `{"path", "id", "resume", "tool"}`. `ledger`: the
    host's import ledger, told of the file written (see the module's docstring). `tool`
    markdown or html writes a document instead (`documents.export_document`:
    `{"format", "path", "assets"}`; `assets`: a Markdown document's images as files)."""
    if tool in DOCUMENTS:
        return export_document(store, session_id, tool, out, assets)
    target = writer(tool)
    environ = os.environ if env is None else env
    root = target.default_root(environ, home or Path(os.path.expanduser("~")))
    made = target.export(export_input(store, session_id), root, Path(out) if out else None)
    result = {"tool": tool, "path": str(made.path), "id": made.id, "resume": made.resume}
    at = now_ts()
    if ledger is not None:
        ledger.remember_export(tool, made.id, str(made.path), session_id, at)
    if SourceRef.from_meta(store.get(session_id).header.meta.get("source")) is None:
        # an imported session's log follows its source (a re-import compares them):
        # only sessions of Forkwise's own record where they were sent
        store.append(session_id, [{"type": EXPORT_EVENT, "ts": at, **result}])
    return result
