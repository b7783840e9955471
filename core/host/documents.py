"""The export verb's document formats: a session written as Markdown or as one
self-contained HTML file (`sessions export ID --to markdown|html`).

Reached through the one export verb (`exporting.export_session`), so the CLI, the host's
RPC and the app's client share it. The rendering lives in `forkwise.core.reading`; this
module gathers what it needs from the store and writes the file — never over an existing
one: a path that exists is refused with `exists` and nothing is written
(`formats.base.write_new_file`, the tools' exports' writer too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forkwise.core.errors import StorageError, TargetExists
from forkwise.core.formats.base import SourceRef, source_session_id, write_new_file
from forkwise.core.reading import DOCUMENTS
from forkwise.core.reading.document import Document, html_bytes
from forkwise.core.reading.markdown_doc import to_markdown
from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]


def document_of(store: SessionStore, session_id: str) -> Document:
    """The session's events and the facts its document's header shows. A fork's log holds
    its source's history (copied when it was made), so this is its history from the root."""
    snap = store.get(session_id)
    events = [e.to_record() for e in snap.events]
    header = snap.header
    source = SourceRef.from_meta(header.meta.get("source"))
    subagents: dict[str, str] = {}
    if source is not None and source.tool == "claude":
        # a Task call's result names its subagent (`agentId`); the import stored that
        # subagent's line under an id derived from it
        for event in events:
            detail = event.get("detail") if event["type"] == "tool/result" else None
            agent = detail.get("agentId") if isinstance(detail, dict) else None
            if isinstance(agent, str):
                child = source_session_id("claude", source.id, agent)
                if store.exists(child):
                    subagents[agent] = child
    return Document(
        session_id=session_id,
        title=store.summary(session_id).display_title,
        events=events,
        cwd=header.cwd,
        created=header.created,
        agent=source.tool if source is not None else None,
        parent_session=header.parent_session,
        seed_length=header.seed_length,
        subagents=subagents,
    )


def export_document(
    store: SessionStore, session_id: str, kind: str, out: str | None, assets: bool = False
) -> Json:
    """Write the session as `kind` (markdown, html) to `out` (default: `<id>.md|.html` in
    the current folder): `{"format", "path", "assets": [paths]}`. `assets` (Markdown):
    images as files in `<name>_assets/` beside it instead of data URIs."""
    target = Path(out) if out else Path.cwd() / f"{session_id}{DOCUMENTS[kind]}"
    if target.exists():
        raise TargetExists(f"{target} exists already; nothing was written", path=str(target))
    if not target.parent.is_dir():
        raise StorageError(f"{target.parent} is not a folder; nothing was written",
                           path=str(target))
    doc = document_of(store, session_id)
    written: list[str] = []
    if kind == "html":
        data = html_bytes(doc)
    else:
        folder = f"{target.stem}_assets" if assets else None
        made = to_markdown(doc, folder)
        data = made.text.encode("utf-8")
        if made.assets:
            (target.parent / str(folder)).mkdir(exist_ok=True)
        for name, content in made.assets:
            write_new_file(target.parent / name, content)
            written.append(str(target.parent / name))
    write_new_file(target, data)
    return {"format": kind, "path": str(target), "assets": written}
