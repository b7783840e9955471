"""Reading Gemini CLI session files into Forkwise sessions, with their lineage.

A file gives its main line (the messages as Gemini CLI resumes them; Forkwise id
`gemini-<sessionId>`) and one fork per `$rewindTo` (the messages as they stood before the
rewind: its parent the session, among those already taken from the file, sharing the most
messages with it, the main line first; its id derived from the first message it lost). A
subagent's file (`chats/<parent session id>/<id>.jsonl`, `kind: "subagent"`) is a
subagent child of its parent session.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..base import (
    FormatError,
    HoldsNothing,
    ImportedSession,
    Relation,
    SourceRef,
    Tool,
    collector_paused,
    source_session_id,
)
from . import layout
from .convert import convert, resumable, text_of
from .records import GeminiFile, Msg, load

#: a file written to this recently may still be growing: its last turn is left open
LIVE_WINDOW_SECONDS = 300.0


class GeminiReader:
    """Reads Gemini CLI sessions (`~/.gemini/tmp/<slug>/chats/session-*.jsonl`)."""

    tool: Tool = "gemini"

    def __init__(self, live_window: float = LIVE_WINDOW_SECONDS) -> None:
        self.live_window = live_window

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [layout.gemini_dir(env, home) / "tmp"]

    def session_files(self, root: Path) -> Iterator[Path]:
        yield from layout.session_files(root)

    def sniff(self, head: bytes) -> bool:
        first = head.split(b"\n", 1)[0]
        if b'"sessionId"' in first and b'"projectHash"' in first:
            return True
        # a legacy file: one (indented) JSON document
        return head.lstrip().startswith(b"{") and b'"projectHash"' in head and b'"messages"' in head

    def read(self, path: Path) -> list[ImportedSession]:
        try:
            mtime = path.stat().st_mtime
        except OSError as exc:
            raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
        with collector_paused():
            file = load(path)
            live = file.torn_tail or time.time() - mtime < self.live_window
            sessions = sessions_of(file, live)
        if not sessions:
            raise HoldsNothing(f"{path}: Gemini CLI's own context, no conversation")
        return sessions


def sessions_of(file: GeminiFile, live: bool) -> list[ImportedSession]:
    """The sessions of a file; none for a file Gemini CLI does not list either (nothing
    but its own context: a resume with -p leaves such a file under the resumed id)."""
    if not file.branches and not any(resumable(m.record) for m in file.messages):
        return []
    sid = file.session_id
    meta = file.meta
    main_id = source_session_id("gemini", sid)
    source = SourceRef(
        "gemini", os.path.abspath(file.path), sid, "json" if file.legacy else "jsonl"
    )
    cwd = layout.project_cwd(file.path) or _first_dir(meta) or ""
    created = str(meta.get("startTime") or _first_ts(file.messages) or "")
    parent: str | None = None
    relation: Relation | None = None
    if file.path.parent.name != "chats" and file.path.parent.parent.name == "chats":
        # chats/<parent session id>/<id>.jsonl: a subagent Gemini CLI ran for that session
        parent, relation = source_session_id("gemini", file.path.parent.name), "subagent"
    summary = meta.get("summary")
    title = summary.strip() if isinstance(summary, str) and summary.strip() else None
    main = convert(sid, created, file.messages, live)
    out = [
        ImportedSession(
            id=main_id,
            created=created,
            cwd=cwd,
            source=source,
            events=main.out,
            title=title,
            parent=parent,
            relation=relation,
            unmapped=main.unmapped,
            warnings=list(file.warnings),
        )
    ]
    paths: dict[str, list[Msg]] = {main_id: file.messages}
    for branch in file.branches:
        first = branch.path[branch.start]
        branch_id = source_session_id("gemini", sid, first.id)
        n = 1
        while branch_id in paths:
            n += 1
            branch_id = source_session_id("gemini", sid, f"{first.id}-{n}")
        owner = max(paths, key=lambda key: _shared(paths[key], branch.path))
        paths[branch_id] = branch.path
        converted = convert(sid, created, branch.path, False)
        out.append(
            ImportedSession(
                id=branch_id,
                created=str(first.record.get("timestamp") or created),
                cwd=cwd,
                source=source,
                events=converted.out,
                title=_branch_title(branch.path, branch.start),
                parent=owner,
                relation="fork",
                unmapped=converted.unmapped,
            )
        )
    return out


def _shared(a: list[Msg], b: list[Msg]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x.id != y.id:
            break
        n += 1
    return n


def _branch_title(path: list[Msg], start: int) -> str | None:
    for msg in path[start:]:
        if msg.record.get("type") == "user":
            text = text_of(msg.record.get("content")).strip()
            if text:
                return text.splitlines()[0][:80]
    return None


def _first_dir(meta: Mapping[str, object]) -> str | None:
    dirs = meta.get("directories")
    if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
        return dirs[0]
    return None


def _first_ts(messages: list[Msg]) -> str | None:
    for msg in messages:
        ts = msg.record.get("timestamp")
        if isinstance(ts, str):
            return ts
    return None


READER = GeminiReader()
