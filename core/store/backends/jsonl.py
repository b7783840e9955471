"""JSON Lines persistence: `<store>/sessions/<id>.jsonl`, one file per session.

Line 1 is the header, every further line one event. Files are created whole (temp file,
fsync, link into place), appended with fsync, and rewritten only through temp file +
fsync + `os.replace` + directory fsync. Reading never modifies a file: a torn last line
(a crash mid-write) is set aside in memory, and moved to `<store>/recovered/` only when
the writer next appends to that session.

This module holds the backend: opening the store, the reading API and every write. The
parsing and checking of a file is in `jsonl_read`, the fork by byte copy in `jsonl_fork`,
the summary index in `catalogue`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import orjson

from forkwise.core.errors import (
    DuplicateSessionId,
    ForkwiseError,
    ReadOnlyStore,
    StaleSession,
    StorageError,
    StoreLocked,
)
from forkwise.core.log.event_log import event_lines, gc_paused, head
from forkwise.core.log.events import Event, now_ts
from forkwise.core.log.ids import validate_session_id
from forkwise.core.safe_read import read_lines, read_regular
from forkwise.core.store.atomic import fsync_dir, write_file_atomically
from forkwise.core.store.backend import IndexedFork, LoadedLog, Progress, Remembered
from forkwise.core.store.backends.appenders import Appenders
from forkwise.core.store.backends.catalogue import Catalogue, LogFacts
from forkwise.core.store.backends.index_head import read_head
from forkwise.core.store.backends.jsonl_fork import indexed_fork, line_end, write_fork
from forkwise.core.store.backends.jsonl_read import Tail, parse_file, parse_log, trusted_log
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
from forkwise.core.store.store_dir import make_private_dir, prepare_for_writing
from forkwise.core.store.writer_lock import WriterLock

#: parse_log is imported from here by the CLI and tests (it was defined here)
__all__ = ["JsonlBackend", "parse_log"]

FILE_MODE = 0o600
#: new files written and not named yet, at most (each holds a file descriptor)
_UNNAMED_MAX = 64


@dataclass
class _Pending:
    """An append written but not yet fsynced, and the size to go back to on failure."""

    fd: int
    size_before: int


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
        self._pending: dict[str, _Pending] = {}
        #: sessions created with `name_later` whose names the sessions folder's next fsync
        #: makes durable
        self._unsynced_names: set[str] = set()
        #: of those, the ones still under a temporary name, their fsync in flight
        self._unnamed = UnnamedFiles()
        #: each session file as this backend last read or wrote it (`_identity`)
        self._seen: dict[str, tuple[int, int, int, int]] = {}
        self._appenders = Appenders()
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
        self.catalogue = Catalogue(self.root / "index.json", writable)
        if writable:
            self._sweep_leftovers()

    def _sweep_leftovers(self) -> None:
        """Clear what a crash mid-write can leave beside the logs (the writer lock is held,
        so no write is in flight): unplaced temp files go, and the previous version kept
        during a rewrite (`.old`) moves to `<store>/recovered/`, where a person can find it."""
        for folder in (self.root, self.sessions_dir):
            try:
                names = [n for n in os.listdir(folder) if n.startswith(".")]
            except OSError:
                continue
            for name in names:
                path = folder / name
                with contextlib.suppress(OSError):
                    if name.endswith(".tmp"):
                        path.unlink()
                    elif name.endswith(".old"):
                        recovered = self.root / "recovered"
                        make_private_dir(recovered)
                        os.replace(path, recovered / name.lstrip("."))

    def path(self, session_id: str) -> Path:
        return self.sessions_dir / f"{validate_session_id(session_id)}.jsonl"

    # --- reading -----------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return session_id in self._unnamed or self.path(session_id).exists()

    def _scan(self) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(self.sessions_dir) as it:
                for entry in it:
                    name = entry.name
                    if name.endswith(".jsonl") and not name.startswith("."):
                        yield entry
        except FileNotFoundError:
            return

    def indexed_summaries(self, newest: int | None = None) -> list[SessionSummary]:
        """The summaries the index vouches for (`Catalogue.vouched`): no log is read, no
        lock is needed; a front end shows them while the store opens. With `newest`: only
        the `newest` most recently active sessions at the top of their lineage and every
        session beneath them (a list sorted by activity: its first page), and only their
        logs are checked; a session beneath one the index does not vouch for is left out."""
        if newest is None:
            return self.catalogue.vouched(list(self._scan()))
        # the index's head when it is current (index_head): the same entries, not all of
        # them; the whole index when the head runs out of tops its logs still match
        head = read_head(self.catalogue.path, newest)
        if head is not None:
            out, missing = self._first_page(*head.lineage(), head.vouch, newest)
            if not missing or head.complete:
                return out
        return self._first_page(*self.catalogue.lineage(), self.catalogue.vouch, newest)[0]

    def _first_page(
        self,
        tops: Sequence[str],
        children: dict[str, list[str]],
        vouch: Callable[[str, os.stat_result], SessionSummary | None],
        newest: int,
    ) -> tuple[list[SessionSummary], int]:
        """The first `newest` tops that `vouch` vouches for and everything beneath them
        it vouches for, and how many tops short of `newest` `tops` ran."""
        out: list[SessionSummary] = []
        with gc_paused():
            for top in tops:
                if newest <= 0:
                    break
                stack = [top]
                while stack:
                    summary = self._vouched(stack.pop(), vouch)
                    if summary is None:
                        continue
                    if summary.id == top:
                        newest -= 1
                    out.append(summary)
                    stack.extend(children.get(summary.id, ()))
        return out, newest

    def _vouched(
        self, sid: str, vouch: Callable[[str, os.stat_result], SessionSummary | None]
    ) -> SessionSummary | None:
        try:
            st = os.stat(self.path(sid))
        except (OSError, ForkwiseError):
            return None
        return vouch(sid, st)

    def session_ids(self) -> list[str]:
        return [e.name[: -len(".jsonl")] for e in self._scan()]

    def load(self, session_id: str) -> LoadedLog | None:
        if session_id in self._unnamed:
            self._name_unnamed()
        path = self.path(session_id)
        try:
            lines, size, st = read_lines(path)  # no link, no FIFO, bounded
            self._seen[session_id] = _identity(st)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}", path=str(path)) from exc
        parsed = None
        known = self.catalogue.checked(session_id, st) if size == st.st_size else None
        if known is not None and (known[1].open_turn is not None or known[1].pending_approvals):
            known = None  # facts that would block a write (an open turn) come from the log
        if known is not None:
            parsed = trusted_log(lines, size, str(path), *known)
        loaded, header_raw, tail = parsed or parse_file(session_id, path, lines, size)
        self._headers[session_id] = header_raw
        self._tails[session_id] = tail
        if loaded.point is not None and tail.point_end is not None:
            self._line_ends[session_id] = (loaded.point.seq, tail.point_end)
        return loaded

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        """The index's fork point, checked cheaply against the file (`indexed_fork`)."""
        return indexed_fork(self.path(session_id), session_id, self.catalogue)

    def summaries(self, skip: set[str], progress: Progress | None = None) -> list[SessionSummary]:
        entries = [e for e in self._scan() if e.name[: -len(".jsonl")] not in skip]
        return self.catalogue.summaries(entries, self._summarize, progress)

    def _summarize(self, path: Path) -> tuple[SessionSummary, LogFacts | None]:
        lines, size, _ = read_lines(path)
        loaded, _, tail = parse_file(path.name[: -len(".jsonl")], path, lines, size)
        assert loaded.summary is not None  # the parser computes it
        return loaded.summary, LogFacts.of(loaded.state, loaded.point, tail.point_end)

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

    def _create(self, change: SessionCreated) -> None:
        sid = change.header.id
        path = self.path(sid)
        if sid in self._unnamed or path.exists():
            raise DuplicateSessionId(f"a session {sid!r} exists already", session_id=sid)
        header_raw = change.header_raw or orjson.dumps(change.header.to_record())
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
            # one join of lines made and dropped one by one: the file's bytes are put
            # together once (adding the parts up copied a large import four times)
            lines = chain(
                (header_raw + b"\n",),
                (line + b"\n" for line in event_lines(change.seed)),
                (line + b"\n" for line in event_lines(change.events)),
            )
            if change.name_later:
                # named after its fsync, which runs beside the next files' (`unnamed`)
                if len(self._unnamed) >= _UNNAMED_MAX:
                    self._name_unnamed()
                self._unnamed.write(sid, path, b"".join(lines), FILE_MODE)
                self._unsynced_names.add(sid)
                self._headers[sid] = header_raw
                self._tails[sid] = Tail(0, None, False)
                return
            write_file_atomically(path, b"".join(lines), overwrite=False)
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
        if src is None:
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
        if header_raw is None or session_id not in self._tails:
            return None
        return line_end(self.path(session_id), header_raw, events)

    def _append(self, change: EventsAppended) -> None:
        sid = change.session_id
        tail = self._tails.get(sid)
        if tail is not None and tail.torn is not None:
            self._appenders.close(sid)  # the file is cut through another handle
            self._set_aside_torn_tail(sid, self.path(sid), tail)
        prefix = b"\n" if tail is not None and tail.needs_newline else b""
        data = prefix + b"\n".join(e.encode() for e in change.events) + b"\n"
        appender, st = self._appenders.written(sid, lambda: self.path(sid), data)
        self._pending[sid] = _Pending(appender.fd, st.st_size - len(data))
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
            _undo_append(pending.fd, pending.size_before)
            raise
        self._appenders.release(session_id)

    def _set_aside_torn_tail(self, session_id: str, path: Path, tail: Tail) -> None:
        """Keep a crash's torn last line where a person can find it, then drop it from
        the log so that appends continue after the last whole event."""
        assert tail.torn is not None
        self._keep_torn_tail(session_id, tail.torn)
        with open(path, "r+b") as fh:
            fh.truncate(tail.good_length)
            os.fsync(fh.fileno())
        tail.torn = None

    def _keep_torn_tail(self, session_id: str, torn: bytes) -> None:
        recovered = self.root / "recovered"
        make_private_dir(recovered)
        stamp = now_ts().replace(":", "").replace(".", "")
        keep = recovered / f"{session_id}.{stamp}.torn-tail"
        write_file_atomically(keep, torn, overwrite=False)

    def _rewrite(
        self, session_id: str, kept: Sequence[Event], header: SessionHeader | None
    ) -> None:
        self._appenders.close(session_id)  # the file is replaced: appends go to the new one
        path = self.path(session_id)
        tail = self._tails.get(session_id)
        if tail is not None and tail.torn is not None:
            self._keep_torn_tail(session_id, tail.torn)  # the rewrite must not drop it
        header_raw = self._headers.get(session_id)
        if header_raw is None:
            header_raw = read_regular(path)[0].split(b"\n", 1)[0]
        if header is not None and SessionHeader.from_record(orjson.loads(header_raw)) != header:
            header_raw = orjson.dumps(header.to_record())
        body = [header_raw, *event_lines(kept)]
        write_file_atomically(path, b"\n".join(body) + b"\n")
        self._seen[session_id] = _identity(os.lstat(path))
        self._headers[session_id] = header_raw
        self._tails[session_id] = Tail(0, None, False)
        self._line_ends.pop(session_id, None)

    def _dispose(self, session_id: str) -> None:
        """Deleting moves the file to `<store>/trash/`: a person can still get it back."""
        self._appenders.close(session_id)  # nothing more may be written to the trashed file
        trash = self.root / "trash"
        make_private_dir(trash)
        stamp = now_ts().replace(":", "").replace(".", "")
        path, trashed = self.path(session_id), trash / f"{session_id}.{stamp}.jsonl"
        os.replace(path, trashed)
        try:
            fsync_dir(self.sessions_dir)
        except OSError:
            with contextlib.suppress(OSError):
                os.replace(trashed, path)  # the store still has the session: so does the disk
            raise
        self._headers.pop(session_id, None)
        self._tails.pop(session_id, None)
        self._line_ends.pop(session_id, None)
        self._seen.pop(session_id, None)

    def restore(self, session_id: str) -> bool:
        """Move the latest trashed copy of a session (`_dispose`) back into place."""
        path = self.path(session_id)
        trashed = re.compile(re.escape(session_id) + r"\.\d{4}-\d{2}-\d{2}T\d+Z\.jsonl")
        try:
            names = sorted(e.name for e in os.scandir(self.root / "trash")
                           if trashed.fullmatch(e.name))
        except FileNotFoundError:
            return False
        if not names:
            return False
        if path.exists():
            raise DuplicateSessionId(f"a session {session_id!r} exists already",
                                     session_id=session_id)
        try:
            os.replace(self.root / "trash" / names[-1], path)
            fsync_dir(self.sessions_dir)
        except OSError as exc:
            raise StorageError(f"cannot restore {session_id!r}: {exc}", path=str(path)) from exc
        return True

    def close(self) -> None:
        with contextlib.suppress(StorageError):
            self._name_unnamed()
        self._unnamed.close()
        for sid in [*self._pending, *list(self._unsynced_names)[:1]]:
            with contextlib.suppress(OSError):
                self._flush(sid)
        self._appenders.close_all()
        self.catalogue.forget_loaded()
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells one state of a file from another: inode (a replaced file), size, mtime
    and ctime (which no one can set back, unlike mtime)."""
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _undo_append(fd: int, size_before: int) -> None:
    """Put the file back the way it was before a failed append."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size_before)
        os.fsync(fd)
    with contextlib.suppress(OSError):
        os.close(fd)
