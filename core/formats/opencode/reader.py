"""Reading OpenCode's database into Forkwise sessions, with their lineage.

Each OpenCode session is a Forkwise session `opencode-<sessionID>`:
- `parent_id` set: a subtask's session, a subagent child of that session;
- no `parent_id`, but its first messages are copies of another session's (OpenCode's fork
  copies the messages before the fork point under new ids, with the same content and
  times, and titles the copy "… (fork #N)"): a fork child of the session it shares the
  most messages with, the copies keyed as the originals so the shared prefix is stored
  once;
- a `revert` set: the main line ends before the reverted message, and the whole list
  (reverted messages included, as OpenCode keeps them until the next prompt) is a fork
  child `opencode-<sessionID>-<messageID>`.

The older `storage/` tree of JSON files (legacy.py) gives the same sessions, one session
file at a time.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from ..base import (
    ImportedSession,
    Relation,
    SourceRef,
    Tool,
    collector_paused,
    source_session_id,
)
from . import legacy
from .convert import convert, iso_ms
from .store import DB_NAME, SQLITE_MAGIC, Message, Session, data_dir, load

LIVE_WINDOW_SECONDS = 300.0
_FORK_TITLE = re.compile(r"^(.*) \(fork #(\d+)\)$")


def signature(msg: Message) -> bytes:
    """What a fork's copy of a message has in common with the original: everything but
    the ids OpenCode gives the copy."""
    data = {k: v for k, v in msg.data.items() if k not in ("id", "sessionID", "parentID")}
    parts = [
        {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")} for p in msg.parts
    ]
    return orjson.dumps([data, parts], option=orjson.OPT_SORT_KEYS)


class OpenCodeReader:
    """Reads OpenCode's `opencode.db`."""

    tool: Tool = "opencode"

    def __init__(self, live_window: float = LIVE_WINDOW_SECONDS) -> None:
        self.live_window = live_window
        self.projects = legacy.ProjectCache()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [data_dir(env, home)]

    def session_files(self, root: Path) -> Iterator[Path]:
        if root.is_file():
            yield root
            return
        db = root / DB_NAME
        if db.is_file():
            yield db
        yield from legacy.session_files(root if root.name == "storage" else root / "storage")

    def sniff(self, head: bytes) -> bool:
        if head.startswith(SQLITE_MAGIC):
            return True
        # a session file of the older storage tree (JSON, indented)
        return head.lstrip().startswith(b"{") and b'"projectID"' in head and b'"ses_' in head

    def read(self, path: Path) -> list[ImportedSession]:
        now, window = time.time() * 1000, self.live_window * 1000
        with collector_paused():
            if legacy.is_session_file(path):
                project = self.projects.sessions(path)
                own = path.stem
                files = {s.id: str(path.parent / f"{s.id}.json") for s in project}
                every = sessions_of(path, project, now, window, files=files)
                return [s for s in every if s.source.id == own]
            return sessions_of(path, load(path), now, window)

    def release(self) -> None:
        """Forget the legacy projects read together (the import verb calls this)."""
        self.projects.release()


def sessions_of(
    path: Path,
    sessions: list[Session],
    now_ms: float,
    window_ms: float,
    files: Mapping[str, str] | None = None,
) -> list[ImportedSession]:
    """`files`: the file of each session (the older storage tree), else `path` for all."""
    db = os.path.abspath(path)
    keys: dict[str, list[str]] = {}
    fork_of: dict[str, str] = {}
    by_first: dict[bytes, list[Session]] = {}
    for session in sessions:
        own = [m.id for m in session.messages]
        parent = None if session.parent_id else _fork_source(session, by_first, keys)
        if parent is not None:
            source, shared = parent
            own[:shared] = keys[source.id][:shared]
            fork_of[session.id] = source.id
        keys[session.id] = own
        if session.messages:
            by_first.setdefault(signature(session.messages[0]), []).append(session)
    out: list[ImportedSession] = []
    for session in sessions:
        out += _imported(
            os.path.abspath(files[session.id]) if files is not None else db,
            session=session,
            keys=keys[session.id],
            fork_source=fork_of.get(session.id),
            now_ms=now_ms,
            window_ms=window_ms,
        )
    return out


def _fork_source(
    session: Session, by_first: dict[bytes, list[Session]], keys: Mapping[str, list[str]]
) -> tuple[Session, int] | None:
    """The earlier session this one's first messages were copied from, and how many."""
    if not session.messages:
        return None
    candidates = by_first.get(signature(session.messages[0]), [])
    best: tuple[Session, int] | None = None
    best_score = (0, False)
    named = _FORK_TITLE.match(str(session.row.get("title") or ""))
    for other in candidates:
        n = 0
        for a, b in zip(other.messages, session.messages, strict=False):
            if signature(a) != signature(b):
                break
            n += 1
        # the most messages shared; between equals, the one the "(fork #N)" title names
        score = (n, named is not None and str(other.row.get("title") or "") == named.group(1))
        if score > best_score:
            best, best_score = (other, n), score
    return best


def _imported(
    db: str,
    *,
    session: Session,
    keys: list[str],
    fork_source: str | None,
    now_ms: float,
    window_ms: float,
) -> list[ImportedSession]:
    row = session.row
    sid = session.id
    main_id = source_session_id("opencode", sid)
    version = row.get("version")
    source = SourceRef("opencode", db, sid, str(version) if version is not None else None)
    created = iso_ms(row.get("time_created"))
    cwd = str(row.get("directory") or "")
    title = str(row.get("title") or "") or None
    updated = row.get("time_updated")
    live = isinstance(updated, (int, float)) and now_ms - updated < window_ms
    parent: str | None = None
    relation: Relation | None = None
    if session.parent_id:
        parent, relation = source_session_id("opencode", session.parent_id), "subagent"
    elif fork_source is not None:
        parent, relation = source_session_id("opencode", fork_source), "fork"
    messages = session.messages
    revert = session.revert
    cut = len(messages)
    if revert is not None:
        cut = next((i for i, m in enumerate(messages) if m.id == revert["messageID"]), cut)
    main = convert(sid, messages[:cut], keys[:cut], live and cut == len(messages))
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
            warnings=list(session.warnings),
        )
    ]
    if cut < len(messages):
        reverted = convert(sid, messages, keys, False)
        out.append(
            ImportedSession(
                id=source_session_id("opencode", sid, messages[cut].id),
                created=iso_ms(messages[cut].created) or created,
                cwd=cwd,
                source=source,
                events=reverted.out,
                title=f"{title} (reverted)" if title else None,
                parent=main_id,
                relation="fork",
                unmapped=reverted.unmapped,
            )
        )
    return out


READER = OpenCodeReader()
# an import reads files in forked worker processes (`host/import_ahead.py`): a worker
# starts with the reader's lock free, whichever thread of the host held it at the fork
os.register_at_fork(after_in_child=READER.projects.forked)
