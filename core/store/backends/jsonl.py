"""JSON Lines persistence: `<store>/sessions/<id>.jsonl`, one file per session.

Line 1 is the header, every further line one event. Files are created whole (temp file,
fsync, link into place), appended with fsync, and rewritten only through temp file +
fsync + `os.replace` + directory fsync. Reading never modifies a file: a torn last line
(a crash mid-write) is set aside in memory, and moved to `<store>/recovered/` only when
the writer next appends to that session.

This module holds the backend: opening the store, the reading API and every write. The
parsing and checking of a file is in `jsonl_read`, the fork by byte copy in `jsonl_fork`,
the summary index in `catalogue` (the list it vouches for in `jsonl_listing`), the files
kept open for appending in `appenders`, an import's files waiting for their names in
`unnamed`, and the trash and the recovered files in `jsonl_aside`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import orjson

from forkwise.core.errors import (
    BrokenSeed,
    DuplicateSessionId,
    ForkwiseError,
    ReadOnlyStore,
    StaleSession,
    StorageError,
    StoreLocked,
)
from forkwise.core.log.digest import running_digests
from forkwise.core.log.event_log import event_lines, head
from forkwise.core.log.events import Event
from forkwise.core.log.ids import validate_session_id
from forkwise.core.safe_read import read_lines, read_regular
from forkwise.core.store.atomic import fsync_dir, write_file_atomically
from forkwise.core.store.backend import (
    IndexedFork,
    LoadedLog,
    Progress,
    Remembered,
    TrashedSession,
)
from forkwise.core.store.backends.appenders import Appenders, Pending, undo_append
from forkwise.core.store.backends.catalogue import Catalogue
from forkwise.core.store.backends.index_head import save_head
from forkwise.core.store.backends.jsonl_aside import (
    cut_torn_tail,
    keep_torn_tail,
    remove_trashed,
    stamp,
    sweep_leftovers,
    trash,
    trashed_files,
    untrash,
)
from forkwise.core.store.backends.jsonl_fork import indexed_fork, line_end, write_fork
from forkwise.core.store.backends.jsonl_listing import indexed_summaries, scan
from forkwise.core.store.backends.jsonl_read import Tail, parse_file, parse_log, trusted_log
from forkwise.core.store.backends.log_facts import LogFacts
from forkwise.core.store.backends.seed_refs import (
    MAX_DEPTH,
    SeedRef,
    broken,
    referred_to,
    split_header,
    with_ref,
)
from forkwise.core.store.backends.unfinished import (
    begin,
    cut_lines,
    end,
    may_be_cut,
    note_path,
    recover,
    unfinished,
    write_note,
)
from forkwise.core.store.backends.unnamed import UnnamedFiles
from forkwise.core.store.session import (
    EventsAppended,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionHeader,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)
from forkwise.core.store.store_dir import prepare_for_writing
from forkwise.core.store.writer_lock import WriterLock

#: parse_log is imported from here by the CLI and tests (it was defined here)
__all__ = ["JsonlBackend", "parse_log"]

FILE_MODE = 0o600
#: new files written and not named yet, at most (each holds a file descriptor)
_UNNAMED_MAX = 64
#: sessions whose lines are kept for the references that may follow (`_reference`)
_RECENT_MAX = 4
#: a session file larger than this is not kept for its branches' seeds (`_seed_reads`)
_SEED_READ_MAX = 64 << 20
#: what the header of an imported session holds (`meta.source`)
_SOURCE = b'"source":'


class JsonlBackend:
    """One JSON Lines file per session under `root`; `writable` takes the writer lock."""

    def __init__(self, root: str | os.PathLike[str], writable: bool = True) -> None:
        self.root = Path(root)
        self.sessions_dir = self.root / "sessions"
        self.writable = writable
        self._lock: WriterLock | None = None
        self._headers: dict[str, bytes] = {}
        self._tails: dict[str, Tail] = {}
        #: where a line ends in a session's file, when known: (its seq, the offset past it)
        self._line_ends: dict[str, tuple[int, int]] = {}
        self._pending: dict[str, Pending] = {}
        #: sessions created with `name_later` whose names the sessions folder's next fsync
        #: makes durable
        self._unsynced_names: set[str] = set()
        #: of those, the ones still under a temporary name, their fsync in flight
        self._unnamed = UnnamedFiles()
        #: each session file as this backend last read or wrote it (`_identity`)
        self._seen: dict[str, tuple[int, int, int, int]] = {}
        self._appenders = Appenders()
        #: the append notes this writer made (`unfinished`) and what each holds: they go
        #: when it closes
        self._notes: dict[Path, bytes] = {}
        #: the sessions whose file holds its seed by reference (`seed_refs`), as last read
        #: or written
        self._refs: dict[str, SeedRef] = {}
        #: the event lines of the sessions created or referred to last (an import's
        #: parent, whose branches come next) and, once asked for, the digest of each prefix
        #: of them: a few, the latest used last
        self._recent: dict[str, tuple[list[bytes], list[str] | None]] = {}
        #: the sessions whose lines branches' seeds were last read from, as their files
        #: were then (`_seed_lines`): the branches of one file share its line objects,
        #: and each checks its digest without hashing its seed again
        self._seed_reads: dict[str, tuple[tuple[int, int, int], list[bytes], list[str]]] = {}
        try:
            if writable:
                prepare_for_writing(self.root)
                lock = WriterLock(self.root / "writer.lock", FILE_MODE)
                if not lock.acquire():
                    raise StoreLocked(
                        f"another Forkwise process is writing to {self.root}",
                        store=str(self.root),
                    )
                self._lock = lock
        except OSError as exc:
            raise StorageError(f"cannot open the store at {self.root}: {exc}") from exc
        # a reader's index is saved while no process holds the writer lock (a cache only)
        self.catalogue = Catalogue(
            self.root / "index.json",
            writable,
            saved=save_head,
            lock=None if writable else self.root / "writer.lock",
            counted=self._counted,
        )
        if writable:
            sweep_leftovers(self.root, self.sessions_dir)
            recover(self.root, self.sessions_dir, stamp())

    def path(self, session_id: str) -> Path:
        return self.sessions_dir / f"{validate_session_id(session_id)}.jsonl"

    # --- reading -----------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return session_id in self._unnamed or self.path(session_id).exists()

    def indexed_summaries(self, newest: int | None = None) -> list[SessionSummary]:
        """The summaries the index vouches for, no log read (`jsonl_listing`)."""
        return indexed_summaries(self.sessions_dir, self.catalogue, self.path, newest)

    def session_ids(self) -> list[str]:
        return [e.name[: -len(".jsonl")] for e in scan(self.sessions_dir)]

    def load(self, session_id: str) -> LoadedLog | None:
        if session_id in self._unnamed:
            self._name_unnamed()
        path = self.path(session_id)
        try:
            # no link, no FIFO, bounded; a seed stored by reference read in its place
            lines, size, st, delta = self._log_lines(session_id, path)
            self._seen[session_id] = _identity(st)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}", path=str(path)) from exc
        parsed = None
        known = self.catalogue.checked(session_id, st) if size - delta == st.st_size else None
        if known is not None and (known[1].open_turn is not None or known[1].pending_approvals):
            known = None  # facts that would block a write (an open turn) come from the log
        if known is not None:
            parsed = trusted_log(lines, size, str(path), *known)
        loaded, header_raw, tail = parsed or parse_file(session_id, path, lines, size)
        _in_file(tail, delta)
        self._headers[session_id] = header_raw
        self._tails[session_id] = tail
        if loaded.point is not None and tail.point_end is not None:
            self._line_ends[session_id] = (loaded.point.seq, tail.point_end)
        return loaded

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        """The index's fork point, checked cheaply against the file (`indexed_fork`)."""
        return indexed_fork(self.path(session_id), session_id, self.catalogue)

    def summaries(self, skip: set[str], progress: Progress | None = None) -> list[SessionSummary]:
        entries = [e for e in scan(self.sessions_dir) if e.name[: -len(".jsonl")] not in skip]
        return self.catalogue.summaries(entries, self._summarize, progress)

    @staticmethod
    def _read_lines(path: Path) -> tuple[list[bytes], int, os.stat_result]:
        """The log's lines, without an append a crash cut short (`unfinished`)."""
        lines, size, st = read_lines(path)
        keep = unfinished(path, size) if may_be_cut(lines, size) else None
        if keep is not None:
            return cut_lines(lines, keep), keep, st
        return lines, size, st

    def _log_lines(
        self, session_id: str, path: Path, depth: int = 0
    ) -> tuple[list[bytes], int, os.stat_result, int]:
        """`_read_lines` of a session's file with a seed stored by reference read in
        its place (`seed_refs`): the lines and size of the whole log as a copy would
        hold it, the file's stat, and how many bytes more than the file that is (0: the
        file holds its seed). Raises BrokenSeed when the seed cannot be read as it was."""
        lines, size, st = self._read_lines(path)
        header_raw, ref = split_header(lines[0], str(path)) if lines else (b"", None)
        if ref is None:
            self._refs.pop(session_id, None)
            return lines, size, st, 0
        seed = self._seed_lines(path, ref, depth)
        self._refs[session_id] = ref
        delta = len(header_raw) - len(lines[0]) + sum(map(len, seed)) + len(seed)
        lines[0:1] = [header_raw, *seed]
        return lines, size + delta, st, delta

    def _seed_lines(self, path: Path, ref: SeedRef, depth: int) -> list[bytes]:
        """The lines a reference names, checked against its digest."""
        if depth >= MAX_DEPTH:
            raise broken(path, ref, f"is more than {MAX_DEPTH} references away")
        if ref.session in self._unnamed:
            self._name_unnamed()
        source = self.path(ref.session)
        try:
            st = os.stat(source)
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            kept = self._seed_reads.get(ref.session)
            if kept is not None and kept[0] == key:
                lines, digests = kept[1], kept[2]
            else:
                lines = self._log_lines(ref.session, source, depth + 1)[0][1:]
                if lines and not lines[-1]:
                    lines.pop()
                digests = running_digests(lines)
        except FileNotFoundError:
            raise broken(path, ref, "is not in the store") from None
        except BrokenSeed:
            raise
        except (OSError, ForkwiseError) as exc:
            raise broken(path, ref, f"cannot be read ({exc})") from exc
        if len(lines) < ref.events or digests[ref.events] != ref.digest:
            raise broken(path, ref, "changed since (its lines are not the ones referred to)")
        if st.st_size <= _SEED_READ_MAX:
            self._seed_reads.pop(ref.session, None)
            self._seed_reads[ref.session] = (key, lines, digests)
            while len(self._seed_reads) > _RECENT_MAX:
                del self._seed_reads[next(iter(self._seed_reads))]
        return lines[: ref.events]

    def _summarize(self, path: Path) -> tuple[SessionSummary, LogFacts | None]:
        sid = path.name[: -len(".jsonl")]
        lines, size, _, delta = self._log_lines(sid, path)
        loaded, _, tail = parse_file(sid, path, lines, size)
        _in_file(tail, delta)
        assert loaded.summary is not None  # the parser computes it
        return loaded.summary, LogFacts.of(loaded.state, loaded.point, tail.point_end)

    def _counted(self, session_id: str) -> frozenset[str]:
        """The replies session `session_id`'s log counts, read from its file (none when
        it cannot be read): a fork's usage head is checked against them."""
        from forkwise.core.log.usage import session_tokens

        try:
            path = self.path(session_id)
            lines, size, _, _ = self._log_lines(session_id, path)
            loaded = parse_file(session_id, path, lines, size)[0]
        except (ForkwiseError, OSError):
            return frozenset()
        return frozenset(session_tokens(loaded.events, len(loaded.events)).replies)

    def save_summaries(self, records: Sequence[Remembered]) -> None:
        """Index what the store knows of sessions whose files are as this backend left
        them; a file changed behind its back loses its entry instead (it is checked line by
        line on its next read), never vouched for with facts from before the change."""
        current = [r for r in records if self.unchanged(r.summary.id)]
        facts = [
            (r.summary, LogFacts.of(r.state, r.point, self._point_end(r.summary.id, r)))
            for r in current
        ]
        stale = [r.summary.id for r in records if not self.unchanged(r.summary.id)]
        self.catalogue.remember(self.sessions_dir, facts, forget=stale)

    def index_held(self) -> contextlib.AbstractContextManager[None]:
        """The index saved once when this is left, not at each change meanwhile."""
        return self.catalogue.held()

    def forget(self, session_id: str) -> None:
        self._seen.pop(session_id, None)
        self.catalogue.remember(self.sessions_dir, [], forget=[session_id])

    def unchanged(self, session_id: str) -> bool:
        seen = self._seen.get(session_id)
        if seen is None:
            return False
        try:
            return _identity(os.lstat(self.path(session_id))) == seen
        except OSError:
            return False

    def _point_end(self, session_id: str, record: Remembered) -> int | None:
        """The file offset past the line of the record's fork point: known, or found from
        the events' line lengths (and checked against the file)."""
        point = record.point
        if point is None:
            return None
        known = self._line_ends.get(session_id)
        if known is not None and known[0] == point.seq:
            return known[1]
        if len(record.events) < point.seq:
            return None
        found = self._line_end(session_id, head(record.events, point.seq))
        if found is not None:
            self._line_ends[session_id] = (point.seq, found)
        return found

    # --- writing -----------------------------------------------------------------

    def persist(self, change: StoreEvent) -> None:
        if not self.writable:
            raise ReadOnlyStore(
                f"the store at {self.root} is open read-only (another process is writing to it)"
            )
        try:
            if self._unnamed and not (isinstance(change, SessionCreated) and change.name_later):
                self._name_unnamed()  # every other change sees the files under their names
            if isinstance(change, SessionCreated):
                self._create(change)
            elif isinstance(change, EventsAppended):
                self._append(change)
            elif isinstance(change, SessionFlushed):
                self._flush(change.session_id)
            elif isinstance(change, SessionTruncated):
                self._rewrite(change.session_id, change.kept, change.header)
            elif isinstance(change, SessionDisposed):
                self._dispose(change.session_id)
        except OSError as exc:
            raise StorageError(f"writing to the store failed: {exc}", errno=exc.errno) from exc

    def write_now(self, change: EventsAppended) -> bool:
        """Write an append at once when it is one write(2) into the page cache: the
        session's file is open for appending, its tail is whole and no import's files wait
        for their names. False: nothing written, `persist` it (on a thread that may wait).
        Made durable by `persist(SessionFlushed)`."""
        sid = change.session_id
        tail = self._tails.get(sid)
        if (
            not self.writable
            or self._unnamed
            or sid not in self._appenders
            or (tail is not None and tail.torn is not None)
        ):
            return False
        try:
            self._append(change)
        except OSError as exc:
            raise StorageError(f"writing to the store failed: {exc}", errno=exc.errno) from exc
        return True

    def _create(self, change: SessionCreated) -> None:
        sid = change.header.id
        path = self.path(sid)
        if sid in self._unnamed or path.exists():
            raise DuplicateSessionId(f"a session {sid!r} exists already", session_id=sid)
        # a header read from elsewhere names no reference: this backend's own are made here
        header_raw = split_header(change.header_raw)[0] if change.header_raw else None
        header_raw = header_raw or orjson.dumps(change.header.to_record())
        self._refs.pop(sid, None)
        source = self._seed_range(change) if change.copied_from else None
        if source is not None:  # a fork: the seed's bytes are copied, not encoded again
            rest = b"".join(line + b"\n" for line in event_lines(change.events))
            # from the file as the store read or wrote it; changed since: refused, not copied
            expect = self._seen.get(src) if (src := change.copied_from) else None
            if change.seed_span is None and expect is None:
                raise StaleSession(f"session {src!r} changed on disk", session_id=src)
            write_fork(path, header_raw, source, rest, expect=expect, identity=_identity)
            _, start, end = source
            if change.seed:
                self._line_ends[sid] = (len(change.seed), len(header_raw) + 1 + end - start)
        else:
            # the file's bytes put together in one join, each line copied once (adding
            # the parts up copied a large import four times; a newline added to each line
            # first, twice: measured)
            seed = list(event_lines(change.seed))
            own = list(event_lines(change.events))
            ref = self._reference(change, seed)
            if ref is None:
                lines = [header_raw, *seed, *own, b""]
            else:  # the seed is the parent's lines: named, not written again
                lines = [with_ref(header_raw, ref), *own, b""]
                self._refs[sid] = ref
            self._remember_lines(sid, [*seed, *own], None)
            if change.name_later:
                # named after its fsync, which runs beside the next files' (`unnamed`)
                if len(self._unnamed) >= _UNNAMED_MAX:
                    self._name_unnamed()
                self._unnamed.write(sid, path, b"\n".join(lines), FILE_MODE)
                self._unsynced_names.add(sid)
                self._headers[sid] = header_raw
                self._tails[sid] = Tail(0, None, False)
                return
            write_file_atomically(path, b"\n".join(lines), overwrite=False)
        self._seen[sid] = _identity(os.lstat(path))
        self._headers[sid] = header_raw
        self._tails[sid] = Tail(0, None, False)

    def _name_unnamed(self) -> None:
        """Give every file written with `name_later` its name, each after its fsync. The
        sessions whose file could not be named are not on disk: this backend forgets them
        and StorageError names them (`lost`)."""
        failed = self._unnamed.name_all(self._named)
        if failed:
            for sid in failed:
                self._headers.pop(sid, None)
                self._tails.pop(sid, None)
                self._unsynced_names.discard(sid)
            sid, exc = next(iter(failed.items()))
            raise StorageError(
                f"writing session {sid!r} to the store failed: {exc}",
                errno=exc.errno,
                lost=list(failed),
            )

    def _named(self, session_id: str, path: Path) -> None:
        self._seen[session_id] = _identity(os.lstat(path))

    def _seed_range(self, change: SessionCreated) -> tuple[Path, int, int] | None:
        """Where a fork's seed stands in its source file: (path, start and end offsets),
        as the index said (`seed_span`) or found by `_line_end`; None: encode the seed."""
        src = change.copied_from
        if src is None or src in self._refs:  # a seed by reference is not in src's file
            return None
        if change.seed_span is not None:
            return (self.path(src), *change.seed_span)
        header_raw = self._headers.get(src)
        end = self._line_end(src, change.seed)
        if header_raw is None or end is None:
            return None
        return self.path(src), len(header_raw) + 1, end

    def _line_end(self, session_id: str, events: Sequence[Event]) -> int | None:
        """The file offset just past the line of the last of `events` (a prefix of a log
        this backend has read or written): `line_end`, else None."""
        header_raw = self._headers.get(session_id)
        if header_raw is None or session_id not in self._tails or session_id in self._refs:
            return None
        return line_end(self.path(session_id), header_raw, events)

    def _append(self, change: EventsAppended) -> None:
        sid = change.session_id
        self._recent.pop(sid, None)  # what a reference to it may name is read again
        tail = self._tails.get(sid)
        if tail is not None and tail.torn is not None:
            self._appenders.close(sid)  # the file is cut through another handle
            cut_torn_tail(self.root, sid, self.path(sid), tail)
        prefix = b"\n" if tail is not None and tail.needs_newline else b""
        data = prefix + b"\n".join(e.encode() for e in change.events) + b"\n"
        noted = None
        if len(change.events) > 1:  # all or nothing: a note until it is durable
            before = os.lstat(self.path(sid)).st_size
            note = note_path(self.path(sid))
            noted = (note, self._notes.get(note))  # as it was: put back if this fails
            self._notes[note] = begin(self.path(sid), before, before + len(data))
        try:
            appender, st = self._appenders.written(sid, lambda: self.path(sid), data)
        except BaseException:
            if noted is not None:
                self._put_back(*noted)  # `written` took the bytes back
            raise
        self._pending[sid] = Pending(appender.fd, st.st_size - len(data), noted)
        self._seen[sid] = _identity(st)
        if tail is not None:
            tail.needs_newline = False

    def _flush(self, session_id: str) -> None:
        if session_id in self._unsynced_names:
            fsync_dir(self.sessions_dir)  # every name created since, in one sync
            self._unsynced_names.clear()
        pending = self._pending.pop(session_id, None)
        if pending is None:
            return
        try:
            os.fsync(pending.fd)
        except OSError:
            self._appenders.forget(session_id)
            undo_append(pending)
            if pending.note is not None:
                self._put_back(*pending.note)
            raise
        self._appenders.release(session_id)

    def _rewrite(
        self, session_id: str, kept: Sequence[Event], header: SessionHeader | None
    ) -> None:
        self._detach_children(session_id)
        self._appenders.close(session_id)  # the file is replaced: appends go to the new one
        path = self.path(session_id)
        self._drop_note(path)
        tail = self._tails.get(session_id)
        if tail is not None and tail.torn is not None:
            keep_torn_tail(self.root, session_id, tail.torn)  # the rewrite must not drop it
        header_raw = self._headers.get(session_id)
        if header_raw is None:  # the file is written whole: without a reference
            header_raw = split_header(read_regular(path)[0].split(b"\n", 1)[0])[0]
        if header is not None and SessionHeader.from_record(orjson.loads(header_raw)) != header:
            header_raw = orjson.dumps(header.to_record())
        body = [header_raw, *event_lines(kept)]
        write_file_atomically(path, b"\n".join(body) + b"\n")
        self._refs.pop(session_id, None)
        self._seen[session_id] = _identity(os.lstat(path))
        self._headers[session_id] = header_raw
        self._tails[session_id] = Tail(0, None, False)
        self._line_ends.pop(session_id, None)

    def _dispose(self, session_id: str) -> None:
        """Deleting moves the file to `<store>/trash/`: a person can still get it back,
        whole (a seed stored by reference is written into it first), and the sessions
        whose seed is stored in it are made whole before it goes."""
        self._detach_children(session_id)
        if referred_to(self.path(session_id)) is not None:
            self._make_whole(session_id)
        self._appenders.close(session_id)  # nothing more may be written to the trashed file
        self._drop_note(self.path(session_id))
        trash(self.root, self.sessions_dir, session_id, self.path(session_id))
        self._headers.pop(session_id, None)
        self._tails.pop(session_id, None)
        self._line_ends.pop(session_id, None)
        self._seen.pop(session_id, None)
        self._refs.pop(session_id, None)

    def _drop_note(self, path: Path) -> None:
        """Before a log is replaced or deleted: its append note goes (a shorter log could
        fall inside the range it names)."""
        note = note_path(path)
        if self._notes.pop(note, None) is not None:
            end(note)

    def _put_back(self, note: Path, held: bytes | None) -> None:
        """A failed append leaves its note as it found it (none, or a finished one's)."""
        if held is None:
            self._notes.pop(note, None)
            end(note)
        else:
            self._notes[note] = held
            write_note(note, held)

    # --- seeds stored by reference (`seed_refs`) ------------------------------------

    def _reference(self, change: SessionCreated, seed: list[bytes]) -> SeedRef | None:
        """The reference a new session's seed may be stored as: when the change offers
        it (`seed_in`) and the seed is that session's first lines byte for byte."""
        src = change.seed_in
        if src is None or not seed or change.header.parent_session != src:
            return None
        if _SOURCE not in self._headers.get(src, b""):
            return None  # `_detach_children` looks for references to imported sessions only
        known = self._recent.pop(src, None)
        try:
            if known is None:
                lines = self._log_lines(src, self.path(src))[0][1:]
                if lines and not lines[-1]:
                    lines.pop()
                known = (lines, None)
        except (OSError, ForkwiseError):
            return None  # its seed is written: a reference is only ever a saving
        lines, digests = known
        if len(lines) < len(seed) or lines[: len(seed)] != seed:
            self._remember_lines(src, lines, digests)
            return None
        if digests is None:
            digests = running_digests(lines)
        self._remember_lines(src, lines, digests)
        return SeedRef(src, len(seed), digests[len(seed)])

    def _remember_lines(
        self, session_id: str, lines: list[bytes], digests: list[str] | None
    ) -> None:
        """Keep a session's event lines for the references to it that may follow."""
        self._recent.pop(session_id, None)
        self._recent[session_id] = (lines, digests)
        while len(self._recent) > _RECENT_MAX:
            del self._recent[next(iter(self._recent))]

    def _detach_children(self, session_id: str) -> None:
        """Before a session's file is rewritten or deleted: every session whose seed is
        stored in it by reference is made whole (the one path for every such change: a
        re-import that repairs a source, a truncation, a delete). A fork's child is
        unaffected by what is later done to its source."""
        self._recent.pop(session_id, None)
        known = self._headers.get(session_id)
        if known is not None and _SOURCE not in known:
            return  # only an import's sessions are referred to: it names its source
        if self._unnamed:
            self._name_unnamed()
        for entry in scan(self.sessions_dir):
            child = entry.name[: -len(".jsonl")]
            if child != session_id and referred_to(Path(entry.path)) == session_id:
                self._make_whole(child)

    def _make_whole(self, session_id: str) -> None:
        """Write a session's seed stored by reference into its own file: the same log,
        self-contained. A torn last line goes to `recovered/`, as a rewrite's does."""
        self._flush(session_id)
        self._appenders.close(session_id)
        path = self.path(session_id)
        self._drop_note(path)
        lines = self._log_lines(session_id, path)[0]
        last = lines.pop()
        if last.strip():  # no newline after the last line: whole, or torn by a crash
            try:
                orjson.loads(last)
                lines.append(last)
            except orjson.JSONDecodeError:
                keep_torn_tail(self.root, session_id, last)
        write_file_atomically(path, b"\n".join(lines) + b"\n")
        self._refs.pop(session_id, None)
        self._seen[session_id] = _identity(os.lstat(path))
        self._headers[session_id] = lines[0]
        self._tails[session_id] = Tail(0, None, False)
        self._line_ends.pop(session_id, None)

    def restore(self, session_id: str) -> bool:
        """Move the latest trashed copy of a session (`_dispose`) back into place."""
        path = self.path(session_id)
        try:
            return untrash(self.root, self.sessions_dir, session_id, path)
        except OSError as exc:
            raise StorageError(f"cannot restore {session_id!r}: {exc}", path=str(path)) from exc

    def trashed(self) -> list[TrashedSession]:
        """The sessions in `<store>/trash/`, each read from its latest copy."""
        found: list[TrashedSession] = []
        for sid, when, path in trashed_files(self.root):
            summary: SessionSummary | None
            try:
                loaded = parse_log(read_regular(path)[0], str(path))[0]
                summary = loaded.summary or SessionSummary.start(loaded.header).fold(loaded.events)
            except (OSError, ForkwiseError):
                summary = None  # listed all the same: it can still be restored or emptied
            found.append(TrashedSession(sid, when, summary))
        return found

    def empty_trash(self, session_id: str | None = None) -> list[str]:
        try:
            return remove_trashed(self.root, session_id)
        except OSError as exc:
            raise StorageError(f"cannot empty the trash: {exc}", path=str(self.root)) from exc

    def close(self) -> None:
        with contextlib.suppress(StorageError):
            self._name_unnamed()
        self._unnamed.close()
        for sid in [*self._pending, *list(self._unsynced_names)[:1]]:
            with contextlib.suppress(OSError):
                self._flush(sid)
        self._appenders.close_all()
        for note in list(self._notes):  # every append is durable or taken back by now
            end(note)
        self._notes.clear()
        self.catalogue.forget_loaded()
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _in_file(tail: Tail, delta: int) -> None:
    """The tail facts of a log read with its seed in place (`_log_lines`), as offsets in
    its file: `delta` bytes less; no fork point's end (the seed's lines are elsewhere)."""
    if delta:
        tail.good_length -= delta
        tail.point_end = None


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells one state of a file from another: inode (a replaced file), size, mtime
    and ctime (which no one can set back, unlike mtime)."""
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
