"""The import verb: session files in, stored sessions out — each source session
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
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from forkwise.core.errors import (
    CorruptLog,
    DuplicateSessionId,
    ForkwiseError,
    InvalidBoundary,
    NotRegularSource,
    StorageError,
)
from forkwise.core.formats.base import (
    DefersBranches,
    FormatError,
    HoldsNothing,
    ImportedSession,
    Reader,
    Record,
    collector_paused,
)
from forkwise.core.host.import_ahead import Checked, ReadAhead, lineage
from forkwise.core.host.import_layout import (
    aligned_turns,
    full_of_stored,
    layout,
    parents_first,
    records_of,
)
from forkwise.core.host.import_ledger import ImportLedger, Stamp, source_stamp
from forkwise.core.safe_read import read_head, read_regular
from forkwise.core.store.backends.jsonl import parse_log
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]
Progress = Callable[[int, int, str], None]
#: the foreign formats, each a package of forkwise.core.formats with READER and WRITER
FORMATS = ("claude", "codex", "pi", "gemini", "opencode")
TOOLS = (*FORMATS, "forkwise")
_HEAD = 8192
#: sessions stored between two syncs of the store's folder (each file is synced itself)
_SYNC_EVERY = 64


class UnknownFormat(ForkwiseError):
    """A file that is not a session of any format this Forkwise reads."""

    code = "unknown-format"


def format_module(tool: str, doing: str = "read") -> ModuleType:
    """The package of a foreign format (imported on first use): its READER and WRITER."""
    if tool not in FORMATS:
        raise UnknownFormat(
            f"cannot {doing} {tool!r} sessions (known: {', '.join(FORMATS)})", tool=tool
        )
    try:
        return importlib.import_module(f"forkwise.core.formats.{tool}")
    except ImportError as exc:
        raise UnknownFormat(f"the {tool} format is not available here: {exc}", tool=tool) from exc


def reader(tool: str) -> Reader:
    found: Reader = format_module(tool).READER
    return found


@dataclass
class ImportReport:
    """What an import did, as `--json` prints it."""

    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[Json] = field(default_factory=list)
    #: what the files read could not read in part, their sessions imported all the same
    #: (`ReadWarning.to_json`: a line that is not JSON, kept as a plugin event); a file
    #: is read again only when it changed, so its warnings come once per change of it
    warnings: list[Json] = field(default_factory=list)
    #: plugin/<tool>/<kind> events made for what has no Forkwise equivalent, by kind
    unmapped: dict[str, int] = field(default_factory=dict)
    #: the import was stopped (its host closing) before every file was read: the files
    #: not read are not in the ledger, and the next import reads them
    stopped: bool = False

    def fail(self, path: Path, error: ForkwiseError, line: int | None = None) -> None:
        reason = {"code": error.code, "message": error.message}
        self.failed.append({"path": str(path), "line": line, "error": reason})

    def to_json(self) -> Json:
        out: Json = {
            "imported": self.imported,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "warnings": self.warnings,
            "unmapped": self.unmapped,
        }
        if self.stopped:
            out["stopped"] = True
        return out


# --- finding and recognising files ----------------------------------------------------


def detect(path: Path) -> str | None:
    """The format of a session file, recognised from its first bytes."""
    try:
        head = read_head(path, _HEAD, follow=True)[:_HEAD]
    except OSError:
        return None
    if head.startswith((b'{"type":"session"', b'{"type": "session"')):
        # pi's header is a `type: session` line too (its sniff tells the two apart): a pi
        # file was taken for a Forkwise log "written by a newer Forkwise (format 3)"
        return "pi" if reader("pi").sniff(head) else "forkwise"
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
    seen: set[str] = set()  # by name: hashing a Path costs more than the rest of a re-import
    unique = []
    for p, t in found:
        name = str(p)
        if name not in seen:
            seen.add(name)
            unique.append((p, t))
    return unique


# --- the verb ---------------------------------------------------------------------------


def import_sources(
    store: SessionStore,
    files: Sequence[tuple[Path, str | None]],
    ledger: ImportLedger,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> ImportReport:
    """Import `files` (each with its format, or None to recognise it). A file whose
    sessions branch from a session not stored yet waits until the other files are in, so
    that a parent is stored before its children in whatever order the files come.

    The store's index is saved once, when the import ends (`SessionStore.index_held`).
    `stop` set (the host closing): the import ends before the next file, what it stored
    durable, indexed and in the ledger, the rest for the next import (`stopped`)."""
    with collector_paused(), store.index_held():  # what is imported stays in memory
        try:
            return _import_all(store, files, ledger, progress, stop)
        finally:
            # before the collector runs again: its first pass after the pause would walk
            # every object the readers keep (a Codex import's parsed files: 8% of it)
            _release_readers()


def _release_readers() -> None:
    """Let the readers an import used drop what they kept to read files together (a
    reader has `release` when it keeps anything)."""
    for tool in FORMATS:
        module = sys.modules.get(f"forkwise.core.formats.{tool}")
        release = getattr(getattr(module, "READER", None), "release", None)
        if release is not None:
            release()


def _import_all(
    store: SessionStore,
    files: Sequence[tuple[Path, str | None]],
    ledger: ImportLedger,
    progress: Progress | None,
    stop: threading.Event | None = None,
) -> ImportReport:
    report = ImportReport()
    total = len(files)
    done = 0
    waiting: list[_Read] = []
    stored = _StoredIds(store)
    unsynced: list[str] = []  # stored, their names made durable with the next batch
    where: dict[str, Path] = {}  # the file each of them was read from

    def one_stored(sid: str, path: Path) -> None:
        unsynced.append(sid)
        where[sid] = path
        if len(unsynced) >= _SYNC_EVERY:
            _flush(store, unsynced, report, where)
            where.clear()
            store.release(unsynced)  # indexed: the batch's lines need not stay in memory
            unsynced.clear()

    def store_read(read: _Read) -> None:
        # a batch may end inside a file (a file rewound at every turn holds 1,500 sessions)
        read.store(store, ledger, report, lambda sid: one_stored(sid, read.path))

    # the files to read are read, mapped and checked by worker processes meanwhile
    ahead = ReadAhead(files, lambda path, tool: _read_ahead(path, tool, ledger), _read_with)
    try:
        for k, (path, tool) in enumerate(files):
            if stop is not None and stop.is_set():
                report.stopped = True
                break
            try:
                read = _read_file(stored, path, tool, ledger, report, ahead=(ahead, k))
                if read is not None and read.orphans(store):
                    waiting.append(read)
                    continue
                if read is not None:
                    store_read(read)
            except ForkwiseError as exc:
                report.fail(path, exc, _line_of(exc))
            done += 1
            if progress is not None:
                progress(done, total, str(path))
        while waiting and not report.stopped:
            if stop is not None and stop.is_set():
                report.stopped = True
                break
            # a file whose parents are in now, else the first one: its parent is in no file
            read = next((r for r in waiting if not r.orphans(store)), waiting[0])
            waiting.remove(read)
            try:
                store_read(read)
            except ForkwiseError as exc:
                report.fail(read.path, exc, _line_of(exc))
            done += 1
            if progress is not None:
                progress(done, total, str(read.path))
    finally:
        ahead.close()
        # what is reported (and remembered in the ledger) as imported is durable
        _flush(store, unsynced, report, where)
        store.release(unsynced)
    ledger.save()
    return report


def _flush(
    store: SessionStore, unsynced: list[str], report: ImportReport, where: Mapping[str, Path]
) -> None:
    """Make a batch of stored sessions durable. A session that could not be put on disk
    (`lost`: its file never got its name) is reported failed, not imported; an import of
    its file again finds it missing and reads the file again."""
    try:
        store.flush(unsynced)
    except StorageError as exc:
        lost = set(exc.details.get("lost", ()))
        if not lost:
            raise
        for sid in lost:
            for done in (report.imported, report.updated):
                if sid in done:
                    done.remove(sid)
            report.fail(where.get(sid, Path(sid)), exc)
        unsynced[:] = [sid for sid in unsynced if sid not in lost]
        store.flush(unsynced)  # the others are named: their folder still needs its sync


def _line_of(exc: ForkwiseError) -> int | None:
    if isinstance(exc, FormatError):
        return exc.line
    line = exc.details.get("line")
    return line if isinstance(line, int) else None


def _read_with(path: Path, tool: str) -> list[ImportedSession]:
    # branches left unbuilt: a file with branches is handed back (`import_ahead.prepare`)
    read = reader(tool)
    return read.read_deferred(path) if isinstance(read, DefersBranches) else read.read(path)


def _read_ahead(path: Path, tool: str | None, ledger: ImportLedger) -> str | None:
    """The format a file is read in by a worker process, or None when the import will
    not read it (the ledger knows it unchanged) or reads it itself (a Forkwise file)."""
    try:
        mode = path.stat()
        if not stat.S_ISREG(mode.st_mode):
            return None
        if ledger.unchanged(path, source_stamp(path, mode)) is not None:
            return None
    except OSError:
        return None
    found = tool or detect(path)
    return None if found == "forkwise" else found


@dataclass
class _Read:
    """The sessions read from one file, not stored yet."""

    path: Path
    st: Stamp
    sessions: list[ImportedSession]
    #: read, laid out and checked by a worker process (`import_ahead`): each session's
    #: checked log; its sessions then hold no events (`tool`: read again with it when
    #: the log cannot be used: a session of the file was stored meanwhile)
    checked: dict[str, Checked] | None = None
    tool: str = ""

    def orphans(self, store: SessionStore) -> bool:
        """Whether a session of it branches from one that is neither in this file nor
        stored (yet)."""
        own = {s.id for s in self.sessions}
        return any(
            s.parent is not None and s.parent not in own and not store.exists(s.parent)
            for s in self.sessions
        )

    def store(
        self,
        store: SessionStore,
        ledger: ImportLedger,
        report: ImportReport,
        stored: Callable[[str], None] | None = None,
    ) -> list[str]:
        """Store the sessions (whole, not yet durable: see `store_sessions`); their ids."""
        if self.checked is not None and not any(store.exists(s.id) for s in self.sessions):
            ids = _store_checked(store, self.sessions, self.checked, report, stored)
        else:
            if self.checked is not None:
                got = _read_sessions(store, self.path, self.tool, ledger)
                if got is None:
                    ledger.remember(self.path, self.st, [])
                    return []
                self.sessions, self.checked = got, None
            ids = store_sessions(store, self.sessions, report, name_later=True, stored=stored)
        ledger.remember(self.path, self.st, ids)
        for s in self.sessions:
            report.warnings.extend(w.to_json() for w in s.warnings)
        return ids


class _StoredIds:
    """Whether sessions are in the store, for the files the ledger knows: one listing of
    the store instead of a stat per session (an unchanged tree costs a stat per file)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.ids: set[str] | None = None

    def all_in(self, ids: Sequence[str]) -> bool:
        if self.ids is None:
            self.ids = set(self.store.ids())
        known = self.ids
        return all(sid in known or self.store.exists(sid) for sid in ids)


def _read_file(
    stored: _StoredIds,
    path: Path,
    tool: str | None,
    ledger: ImportLedger,
    report: ImportReport,
    *,
    ahead: tuple[ReadAhead, int] | None = None,
) -> _Read | None:
    """The sessions of a file to store, or None when there is nothing left to do (the file
    did not change since it was imported, or a Forkwise file was adopted). `ahead`: the
    import's workers and the file's place among its files; what a worker made of it is
    used when the file is the one the worker read."""
    try:
        mode = path.stat()
        # a link is the safe reader's to judge (a link out of the folder is refused as
        # such, whatever it points to)
        if not stat.S_ISREG(mode.st_mode) and not path.is_symlink():
            raise NotRegularSource(
                f"{path} is not a regular file (a FIFO, socket or device): not read",
                path=str(path),
            )
        st = source_stamp(path, mode)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
    known = ledger.unchanged(path, st)
    if known is not None and stored.all_in(known):
        report.unchanged.extend(known)
        return None
    tool = tool or detect(path)
    if tool is None:
        raise UnknownFormat(
            f"{path} is not a session file of Claude Code, Codex, pi, Gemini CLI, OpenCode "
            "or Forkwise",
            path=str(path),
        )
    if tool == "forkwise":
        ledger.remember(path, st, [_import_forkwise(stored.store, path, report)])
        return None
    # asked for only now: an unchanged tree starts no worker
    made = ahead[0].take(ahead[1]) if ahead is not None else None
    if made is not None and (made.tool, made.stamp) == (tool, (st.st_size, st.st_mtime_ns)):
        before = lineage(made.sessions)
        sessions = _continued(stored.store, made.sessions, ledger)
        if made.checked is None:
            return _Read(path, st, sessions)
        if lineage(sessions) == before:  # laid out as the worker laid it out
            return _Read(path, st, sessions, made.checked, tool)
    got = _read_sessions(stored.store, path, tool, ledger)
    if got is None:
        ledger.remember(path, st, [])
        return None
    return _Read(path, st, got)


def _read_sessions(
    store: SessionStore, path: Path, tool: str, ledger: ImportLedger
) -> list[ImportedSession] | None:
    """The sessions of a file as its reader reads them, placed beneath what they
    continue (`_continued`); None for a file its tool wrote with nothing in it."""
    read = reader(tool)
    try:
        # a reader that can builds each branch when it is stored (`store_sessions`)
        sessions = read.read_deferred(path) if isinstance(read, DefersBranches) else read.read(path)
    except HoldsNothing:  # written so by its tool: read, nothing to bring in
        return None
    if not sessions:
        raise FormatError(
            f"{path} holds no session of {tool} (no conversation in it)", path=str(path)
        )
    return _continued(store, sessions, ledger)


def _continued(
    store: SessionStore, sessions: list[ImportedSession], ledger: ImportLedger
) -> list[ImportedSession]:
    """The sessions of a file that Forkwise exported (Continue in) placed
    beneath the session they continue: parent that session, relation "continued", nothing
    shared (`layout` stores them with seedLength 0). That wins over a parent the reader
    found outside the file (a Codex export's `forked_from_id` names the source the fork
    came from: the fork is beneath that source already); a branch inside the file keeps
    its parent in it (a parent read from the same source session: one database holds all
    of OpenCode's sessions, and a session imported from an exported file is a copy of
    its source's messages, but a source of its own)."""
    own = {s.id: s.source.id for s in sessions}
    for s in sessions:
        if s.parent is not None and own.get(s.parent) == s.source.id:
            continue
        origin = ledger.exported_from(s.source.tool, s.source.id)
        if origin is not None and origin != s.id and store.exists(origin):
            s.parent, s.relation = origin, "continued"
            _name_continued(store, s, origin, ledger.exported_at(s.source.tool, s.source.id))
    return sessions


#: what a session read back from a Continue in says it was continued in
_TOOL_NAMES = {"claude": "Claude Code", "codex": "Codex", "pi": "pi"}


def _name_continued(store: SessionStore, s: ImportedSession, origin: str, at: str | None) -> None:
    """A Continue in read back repeats its source's lines, title and times included: it
    is created when it was exported (not when its first copied line was written), and a
    title that is its source's says where it goes on."""
    if at is not None:
        s.created = at
    parent = store.summary(origin).display_title
    if s.title is None or s.title == parent:
        s.title = f"{parent} — continued in {_TOOL_NAMES.get(s.source.tool, s.source.tool)}"


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
    store: SessionStore,
    sessions: Sequence[ImportedSession],
    report: ImportReport,
    *,
    name_later: bool = False,
    stored: Callable[[str], None] | None = None,
) -> list[str]:
    """Store what a reader read from one file: parents before their children, each
    session whole or not at all. Returns the ids. `name_later`: a new session is written
    when this returns, and named and durable after `store.flush` of it (the batch's files
    fsynced together, then one folder sync, instead of both for each file). `stored` is
    told of each session as soon as it is stored (it may flush and release a batch)."""
    # the conversations of the sessions others branch from, kept while they are stored;
    # a deferred branch (`ImportedSession.built`) is built just before it is stored and
    # let go after: never every branch at once
    parents = {s.parent for s in sessions if s.parent is not None}
    full: dict[str, list[Record]] = {}
    done: list[str] = []
    for s in parents_first(sessions):
        deferred = s.later is not None
        s.built()
        if s.id in parents:
            full[s.id] = s.events
        for kind, n in s.unmapped.items():
            report.unmapped[kind] = report.unmapped.get(kind, 0) + n
        parent_full = full.get(s.parent) if s.parent is not None else None
        if s.relation == "continued":
            parent_full = []  # its own events only: it shares nothing with the parent
        elif s.parent is not None and parent_full is None and store.exists(s.parent):
            parent_full = full_of_stored(store, s.parent)
        header, records = layout(store, s, parent_full)
        status = _write(store, header, records, name_later)
        getattr(report, status).append(s.id)
        done.append(s.id)
        if deferred:
            s.events = []  # stored: what it was built from is dropped with it
        if stored is not None:
            stored(s.id)
    return done


def _store_checked(
    store: SessionStore,
    sessions: Sequence[ImportedSession],
    checked: Mapping[str, Checked],
    report: ImportReport,
    stored: Callable[[str], None] | None = None,
) -> list[str]:
    """`store_sessions` of a file a worker process laid out and checked (`import_ahead`)
    for a store holding none of its sessions: each stored as its checked lines."""
    done: list[str] = []
    for s in parents_first(sessions):
        for kind, n in s.unmapped.items():
            report.unmapped[kind] = report.unmapped.get(kind, 0) + n
        store.import_checked(checked[s.id].loaded(), name_later=True)
        report.imported.append(s.id)
        done.append(s.id)
        if stored is not None:
            stored(s.id)
    return done


def _write(
    store: SessionStore, header: SessionHeader, records: list[Record], name_later: bool
) -> str:
    """imported, updated or unchanged: a new session; one that grew (only the new events
    appended; a source rewritten below them is cut back to the last turn they share and
    continued); one that did not change (nothing touched)."""
    if not store.exists(header.id):
        # the records are fresh copies (_numbered, to_record): the store takes them over
        # a branch's start is its parent's: stored by reference to it (`seed_refs`)
        store.import_records(header, records, name_later=name_later, seed_by_reference=True)
        return "imported"
    have = store.get(header.id)
    old = records_of(have.events)
    if old == records:
        return "unchanged"
    keep = new = len(old)
    if records[:keep] != old:
        # stored by an earlier reader (its usage in another form), or rewritten since
        step = aligned_turns(old, records)
        keep, new = step.cut
        if step.mine == len(old) and step.exact:  # all of it there: only what follows is new
            keep, new = step.mine, step.theirs
            if new == len(records):
                return "unchanged"
        elif keep < have.header.seed_length:
            raise InvalidBoundary(
                f"session {header.id!r}: its source changed inside the history it shares "
                "with its parent; import it again after deleting it",
                session_id=header.id,
            )
        else:
            have = store.truncate(have, keep)
    drafts = [{k: v for k, v in r.items() if k != "seq"} for r in records[new:]]
    store.append(header.id, drafts)
    return "updated"
