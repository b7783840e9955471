"""The import verb (DESIGN §9): session files in, stored sessions out — each source session
whole or not at all, one bad file never stopping the others, a second import of the same
sources changing nothing.

Runs on the host's store worker; the CLI (directly or through a running host), the RPC and
the app all reach it through `Host.import_sources`. The formats (`forkwise.core.formats`)
read files into `ImportedSession`s; this module stores them: it turns a session's
`parent` into Forkwise lineage (a fork at the last turn end the two share), brings an
earlier import up to date by appending, and remembers each source file's size and
modification time so that an unchanged file is not read again.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from forkwise.core.errors import (
    CorruptLog,
    DuplicateSessionId,
    ForkwiseError,
    InvalidBoundary,
    StorageError,
)
from forkwise.core.formats.base import FormatError, ImportedSession, Reader
from forkwise.core.log.events import HISTORY_FORK, TURN_END, Event
from forkwise.core.safe_read import read_head, read_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.backends.jsonl import parse_log
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]
Record = dict[str, Any]
Progress = Callable[[int, int, str], None]
#: the foreign formats, each a package of forkwise.core.formats with READER and WRITER
FORMATS = ("claude", "codex", "pi")
TOOLS = (*FORMATS, "forkwise")
_HEAD = 8192


class UnknownFormat(ForkwiseError):
    """A file that is not a session of any format this Forkwise reads."""

    code = "unknown-format"


def reader(tool: str) -> Reader:
    """The reader of a foreign format (its module is imported on first use)."""
    if tool not in FORMATS:
        raise UnknownFormat(f"no reader for {tool!r} (known: {', '.join(TOOLS)})", tool=tool)
    try:
        module = importlib.import_module(f"forkwise.core.formats.{tool}")
    except ImportError as exc:
        raise UnknownFormat(f"the {tool} format is not available here: {exc}", tool=tool) from exc
    found: Reader = module.READER
    return found


@dataclass
class ImportReport:
    """What an import did, as `--json` prints it."""

    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[Json] = field(default_factory=list)
    #: plugin/<tool>/<kind> events made for what has no Forkwise equivalent, by kind
    unmapped: dict[str, int] = field(default_factory=dict)

    def fail(self, path: Path, error: ForkwiseError, line: int | None = None) -> None:
        reason = {"code": error.code, "message": error.message}
        self.failed.append({"path": str(path), "line": line, "error": reason})

    def to_json(self) -> Json:
        return {
            "imported": self.imported,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "unmapped": self.unmapped,
        }


class ImportLedger:
    """Size and modification time of every source file imported, with the sessions it
    gave: a file whose size and mtime still match is not read again. A cache: losing it
    costs one full read, never a wrong import (sessions are compared before writing)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._files: dict[str, list[Any]] = {}
        self._dirty = False
        if path is not None:
            try:
                data = orjson.loads(read_regular(path)[0])  # no link, no FIFO's wait
                if isinstance(data, dict) and isinstance(data.get("files"), dict):
                    self._files = data["files"]
            except (OSError, orjson.JSONDecodeError):
                self._files = {}

    def unchanged(self, path: Path, st: os.stat_result) -> list[str] | None:
        known = self._files.get(str(path))
        if (
            isinstance(known, list)
            and len(known) == 3
            and known[0] == st.st_size
            and known[1] == st.st_mtime_ns
            and isinstance(known[2], list)
        ):
            return [str(i) for i in known[2]]
        return None

    def remember(self, path: Path, st: os.stat_result, ids: Sequence[str]) -> None:
        self._files[str(path)] = [st.st_size, st.st_mtime_ns, list(ids)]
        self._dirty = True

    def save(self) -> None:
        if self.path is not None and self._dirty:
            replace_file(self.path, orjson.dumps({"version": 1, "files": self._files}))
            self._dirty = False


# --- finding and recognising files ----------------------------------------------------


def detect(path: Path) -> str | None:
    """The format of a session file, recognised from its first bytes."""
    try:
        head = read_head(path, _HEAD, follow=True)[:_HEAD]
    except OSError:
        return None
    if head.startswith((b'{"type":"session"', b'{"type": "session"')):
        return "forkwise"
    for tool in FORMATS:
        try:
            if reader(tool).sniff(head):
                return tool
        except UnknownFormat:
            continue
    return None


def discover(
    tool: str | None, paths: Sequence[Path], env: Mapping[str, str], home: Path
) -> list[tuple[Path, str | None]]:
    """The files an import reads, each with its format when known: PATHs (files, or
    folders searched for that tool's session files), or the tools' default folders."""
    tools = [tool] if tool is not None else list(FORMATS)
    found: list[tuple[Path, str | None]] = []
    roots = list(paths)
    if not roots:
        for name in tools:
            if name == "forkwise":
                continue
            for root in reader(name).default_roots(env, home):
                if root.exists():
                    found += [(p, name) for p in reader(name).session_files(root)]
        return found
    for root in roots:
        if not root.is_dir():
            found.append((root, tool))
            continue
        if tool == "forkwise":
            found += [(p, tool) for p in sorted(root.rglob("*.jsonl"))]
            continue
        for name in tools:
            try:
                files = list(reader(name).session_files(root))
            except UnknownFormat:
                continue
            found += [(p, name if tool is not None else None) for p in files]
    seen: set[Path] = set()
    unique = []
    for p, t in found:
        if p not in seen:
            seen.add(p)
            unique.append((p, t))
    return unique


# --- the verb ---------------------------------------------------------------------------


def import_sources(
    store: SessionStore,
    files: Sequence[tuple[Path, str | None]],
    ledger: ImportLedger,
    progress: Progress | None = None,
) -> ImportReport:
    """Import `files` (each with its format, or None to recognise it)."""
    report = ImportReport()
    total = len(files)
    for done, (path, tool) in enumerate(files, 1):
        try:
            _import_file(store, path, tool, ledger, report)
        except FormatError as exc:
            report.fail(path, exc, exc.line)
        except ForkwiseError as exc:
            line = exc.details.get("line")
            report.fail(path, exc, line if isinstance(line, int) else None)
        if progress is not None:
            progress(done, total, str(path))
    ledger.save()
    return report


def _import_file(
    store: SessionStore, path: Path, tool: str | None, ledger: ImportLedger, report: ImportReport
) -> None:
    try:
        st = path.stat()
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
    known = ledger.unchanged(path, st)
    if known is not None and all(store.exists(sid) for sid in known):
        report.unchanged.extend(known)
        return
    tool = tool or detect(path)
    if tool is None:
        raise UnknownFormat(
            f"{path} is not a session file of Claude Code, Codex, pi or Forkwise", path=str(path)
        )
    if tool == "forkwise":
        ids = [_import_forkwise(store, path, report)]
    else:
        sessions = reader(tool).read(path)
        ids = store_sessions(store, sessions, report)
    ledger.remember(path, st, ids)


def _import_forkwise(store: SessionStore, path: Path, report: ImportReport) -> str:
    """A Forkwise session file, adopted as it is (header and events unchanged)."""
    try:
        data = read_regular(path, follow=True)[0]
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
    loaded, header_raw, tail = parse_log(data, str(path))
    if tail.torn is not None:
        raise CorruptLog(f"{path}: the last line is incomplete", path=str(path))
    sid = loaded.header.id
    if store.exists(sid):
        have = store.get(sid)
        same = have.header.to_record() == loaded.header.to_record() and [
            e.encode() for e in have.events
        ] == [e.encode() for e in loaded.events]
        if not same:
            raise DuplicateSessionId(
                f"{path}: a different session {sid!r} exists already", session_id=sid
            )
        report.unchanged.append(sid)
        return sid
    store.import_session(loaded.header, tuple(loaded.events), header_raw)
    report.imported.append(sid)
    return sid


def store_sessions(
    store: SessionStore, sessions: Sequence[ImportedSession], report: ImportReport
) -> list[str]:
    """Store what a reader read from one file: parents before their children, each
    session whole or not at all. Returns the ids."""
    full: dict[str, list[Record]] = {s.id: s.events for s in sessions}
    done: list[str] = []
    for s in _parents_first(sessions):
        for kind, n in s.unmapped.items():
            report.unmapped[kind] = report.unmapped.get(kind, 0) + n
        parent_full = full.get(s.parent) if s.parent is not None else None
        if s.parent is not None and parent_full is None and store.exists(s.parent):
            parent_full = _full_of_stored(store, s.parent)
        header, records = _layout(store, s, parent_full)
        status = _write(store, header, records)
        getattr(report, status).append(s.id)
        done.append(s.id)
    return done


def _parents_first(sessions: Sequence[ImportedSession]) -> list[ImportedSession]:
    by_id = {s.id: s for s in sessions}
    out: list[ImportedSession] = []
    placed: set[str] = set()

    def place(s: ImportedSession, depth: int = 0) -> None:
        if s.id in placed or depth > len(sessions):
            return
        if s.parent in by_id:
            place(by_id[s.parent], depth + 1)
        placed.add(s.id)
        out.append(s)

    for s in sessions:
        place(s)
    return out


def _full_of_stored(store: SessionStore, sid: str) -> list[Record]:
    """An imported session's conversation as its reader gave it: the stored events less
    the `history/fork` this module put after its seed."""
    snap = store.get(sid)
    records = [_unseq(e) for e in snap.events]
    seed = snap.header.seed_length
    forked = snap.header.parent_session is not None and seed < len(records)
    if forked and records[seed].get("type") == HISTORY_FORK:
        del records[seed]
    return records


def _unseq(event: Event) -> Record:
    record = event.to_record()
    del record["seq"]
    return record


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a == b:
        return True
    return {k: v for k, v in a.items() if k != "src"} == {k: v for k, v in b.items() if k != "src"}


def _shared_turns(mine: Sequence[Record], theirs: Sequence[Record]) -> int:
    """How many leading events two conversations share, cut back to the last `turn/end`
    among them (a fork never starts inside a turn)."""
    k = 0
    for a, b in zip(mine, theirs, strict=False):
        if not _same(a, b):
            break
        k += 1
    while k > 0 and mine[k - 1].get("type") != TURN_END:
        k -= 1
    return k


def _layout(
    store: SessionStore, s: ImportedSession, parent_full: list[Record] | None
) -> tuple[SessionHeader, list[Record]]:
    """The header and the records (with seq) a session is stored as."""
    meta: dict[str, Any] = {"source": s.source.to_meta()}
    if s.relation is not None:
        meta["relation"] = s.relation
    if s.parent is None or parent_full is None:
        header = SessionHeader(s.id, s.created, s.cwd, None, 0, MappingProxyType(meta))
        return header, _numbered(s.events)
    shared = _shared_turns(s.events, parent_full)
    parent = store.get(s.parent) if store.exists(s.parent) else None
    if parent is None:  # the parent failed: stand alone rather than lose the session
        header = SessionHeader(s.id, s.created, s.cwd, None, 0, MappingProxyType(meta))
        return header, _numbered(s.events)
    seed = shared
    p_seed = parent.header.seed_length
    if parent.header.parent_session is not None and shared > p_seed:
        seed = shared + 1  # the parent's own history/fork sits inside the shared part
    prefix = [e.to_record() for e in parent.events[:seed]]
    fork_event: Record = {
        "type": HISTORY_FORK,
        "ts": s.events[shared]["ts"] if shared < len(s.events) else s.created,
        "source": s.parent,
        "boundary": seed,
    }
    if s.relation is not None:
        fork_event["relation"] = s.relation
    rest = _numbered([fork_event, *s.events[shared:]], start=seed + 1)
    header = SessionHeader(s.id, s.created, s.cwd, s.parent, seed, MappingProxyType(meta))
    return header, [*prefix, *rest]


def _numbered(records: Iterable[Record], start: int = 1) -> list[Record]:
    return [{**r, "seq": seq} for seq, r in enumerate(records, start)]


def _write(store: SessionStore, header: SessionHeader, records: list[Record]) -> str:
    """imported, updated or unchanged: a new session; one that grew (only the new events
    appended; a source rewritten below them is cut back to the last turn they share and
    continued); one that did not change (nothing touched)."""
    events = [Event.from_record(dict(r)) for r in records]
    if not store.exists(header.id):
        store.import_session(header, events)
        return "imported"
    have = store.get(header.id)
    old = [e.to_record() for e in have.events]
    if old == records:
        return "unchanged"
    keep = len(old)
    if records[:keep] != old:
        keep = _shared_turns(old, records)
        if keep < have.header.seed_length:
            raise InvalidBoundary(
                f"session {header.id!r}: its source changed inside the history it shares "
                "with its parent; import it again after deleting it",
                session_id=header.id,
            )
        have = store.truncate(have, keep)
    drafts = [{k: v for k, v in r.items() if k != "seq"} for r in records[keep:]]
    store.append(header.id, drafts)
    return "updated"
