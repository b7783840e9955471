"""JSON Lines persistence: `<store>/sessions/<id>.jsonl`, one file per session.

Line 1 is the header, every further line one event. Files are created whole (temp file,
fsync, link into place), appended with fsync, and rewritten only through temp file +
fsync + `os.replace` + directory fsync. Reading never modifies a file: a torn last line
(a crash mid-write) is set aside in memory, and moved to `<store>/recovered/` only when
the writer next appends to that session.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..atomic import fsync_dir, write_all, write_file_atomically
from ..errors import (
    CorruptLog,
    DuplicateSessionId,
    ForkwiseError,
    InvalidEvent,
    ReadOnlyStore,
    StorageError,
    StoreLocked,
)
from ..event_log import EventLog, event_lines, head, lines_length
from ..events import MAX_NESTING, TURN_END, Event, check_record, now_ts, too_deep
from ..fork_point import ForkPoint, fork_point_of
from ..ids import validate_session_id
from ..session import (
    EventsAppended,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionHeader,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
    SummaryFold,
)
from ..store import IndexedFork, LoadedLog, Progress, Remembered
from ..turns import BracketState
from ..writer_lock import WriterLock
from .catalogue import Catalogue, LogFacts

DIR_MODE = 0o700
FILE_MODE = 0o600


@dataclass
class _Tail:
    """What the loader learnt about the end of a file, for the next append."""

    good_length: int
    torn: bytes | None
    needs_newline: bool
    #: the file offset just past the line of the log's last completed turn, when the
    #: loader found one and the lines before it are one per event (LoadedLog.point)
    point_end: int | None = None


@dataclass
class _Pending:
    """An append written but not yet fsynced, and the size to go back to on failure."""

    fd: int
    size_before: int


def parse_log(data: bytes, path: str) -> tuple[LoadedLog, bytes, _Tail]:
    """Parse and check a whole session file. Returns the log (its events decoded on first
    access, its summary computed on the way), the raw header line and tail facts.

    Raises CorruptLog naming the file and line for anything but a torn last line.
    """
    with _gc_paused():
        return _parse_log(data, path)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Checking a log allocates one short-lived dict per line and nothing cyclic; the
    cyclic collector has nothing to find meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _parse_log(data: bytes, path: str) -> tuple[LoadedLog, bytes, _Tail]:
    lines, header, tail = _split_log(data, path)
    header_raw = lines[0]
    start = SessionSummary.start(header)
    state, fold = BracketState(), SummaryFold(start)
    kept: list[bytes] = []
    types: list[str] = []
    loads, intern = orjson.loads, sys.intern
    for lineno, raw in enumerate(lines[1:], start=2):
        if not raw or raw.isspace():
            continue
        try:
            record = loads(raw)
            if type(record) is not dict:
                raise InvalidEvent("an event must be a JSON object")
            seq, etype = check_record(record, raw)
            state.step(seq, etype, record)
        except (orjson.JSONDecodeError, InvalidEvent) as exc:
            raise CorruptLog(f"{path}, line {lineno}: {exc}", path=path, line=lineno) from exc
        fold.add(etype, record["ts"], record)
        kept.append(raw)
        types.append(intern(etype))
    if header.seed_length > len(kept):
        raise CorruptLog(
            f"{path}: seedLength {header.seed_length} exceeds the {len(kept)} events",
            path=path,
            line=1,
        )
    events = EventLog.lazy(kept, types)
    point = fork_point_of(events)
    if point is not None and len(kept) == len(lines) - 1:  # no blank lines: offsets hold
        end = len(header_raw) + 1 + events.byte_length(point.seq)
        if end <= tail.good_length and not (tail.needs_newline and point.seq == len(kept)):
            tail.point_end = end
    summary = fold.result(start)
    loaded = LoadedLog(header, events, state, tail.torn, summary=summary, point=point)
    return loaded, header_raw, tail


def _split_log(data: bytes, path: str) -> tuple[list[bytes], SessionHeader, _Tail]:
    """The file's lines (header first; a torn last line left out) and its parsed header."""
    lines = data.split(b"\n")
    last = lines.pop()  # b"" when the file ends with a newline
    torn: bytes | None = None
    needs_newline = False
    good_length = len(data)
    if last.strip():
        try:
            orjson.loads(last)
            lines.append(last)
            needs_newline = True
        except orjson.JSONDecodeError:
            torn = last
            good_length = len(data) - len(last)
    if not lines:
        raise CorruptLog(f"{path}: the file is empty or has no header line", path=path, line=1)
    header_raw = lines[0]
    try:
        header_record = orjson.loads(header_raw)
        if too_deep(header_raw, header_record):
            raise CorruptLog(f"the header nests deeper than {MAX_NESTING} levels")
        header = SessionHeader.from_record(header_record)
    except orjson.JSONDecodeError as exc:
        raise CorruptLog(f"{path}, line 1: not JSON ({exc})", path=path, line=1) from exc
    except ForkwiseError as exc:
        exc.message = f"{path}, line 1: {exc.message}"
        exc.details.update(path=path, line=1)
        exc.args = (exc.message,)
        raise
    return lines, header, _Tail(good_length, torn, needs_newline)


def _trusted_log(
    data: bytes, path: str, summary: SessionSummary, facts: LogFacts
) -> tuple[LoadedLog, bytes, _Tail] | None:
    """The log as the index says a full check found it, when the file is laid out as
    this backend writes it (one line per event); None sends the caller to `parse_log`."""
    lines, header, tail = _split_log(data, path)
    if len(lines) != facts.events + 1 or header.id != summary.id:
        return None  # blank lines or another shape: check every line
    events = EventLog.lazy(lines[1:])
    state = BracketState.restore(
        events, facts.open_turn, facts.open_turn_seq, dict(facts.pending_approvals)
    )
    point = facts.fork
    if point is not None and not _ends_turn(events.line(point.seq - 1), point):
        point = None  # the index is wrong about it: find it again from the lines
    elif (
        point is not None
        and facts.fork_end is not None
        and len(lines[0]) + 1 + events.byte_length(point.seq) == facts.fork_end
    ):
        tail.point_end = facts.fork_end
    loaded = LoadedLog(header, events, state, tail.torn, summary=summary, point=point)
    return loaded, lines[0], tail


def _ends_turn(line: bytes, point: ForkPoint) -> bool:
    """Whether `line` is the `turn/end` a fork point names."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return (
        type(record) is dict
        and record.get("seq") == point.seq
        and record.get("type") == TURN_END
        and record.get("turn") == point.turn
    )


def _parse_file(session_id: str, path: Path, data: bytes) -> tuple[LoadedLog, bytes, _Tail]:
    """parse_log, and the header must name the session its file is named for."""
    loaded, header_raw, tail = parse_log(data, str(path))
    if loaded.header.id != session_id:
        raise CorruptLog(
            f"{path}, line 1: header id {loaded.header.id!r} does not match the file name",
            path=str(path),
            line=1,
        )
    return loaded, header_raw, tail


class JsonlBackend:
    """One JSON Lines file per session under `root`; `writable` takes the writer lock."""

    def __init__(self, root: str | os.PathLike[str], writable: bool = True) -> None:
        self.root = Path(root)
        self.sessions_dir = self.root / "sessions"
        self.writable = writable
        self._lock: WriterLock | None = None
        self._headers: dict[str, bytes] = {}
        self._tails: dict[str, _Tail] = {}
        #: where a line ends in a session's file, when known: (its seq, the offset past it)
        self._line_ends: dict[str, tuple[int, int]] = {}
        self._pending: dict[str, _Pending] = {}
        try:
            if writable:
                for d in (self.root, self.sessions_dir):
                    d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
                    os.chmod(d, DIR_MODE)
                lock = WriterLock(self.root / "writer.lock", FILE_MODE)
                if not lock.acquire():
                    raise StoreLocked(
                        f"another Forkwise process is writing to {self.root}",
                        store=str(self.root),
                    )
                self._lock = lock
                with contextlib.suppress(OSError):
                    os.chmod(self.root / "writer.lock", FILE_MODE)
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
                        recovered.mkdir(mode=DIR_MODE, exist_ok=True)
                        os.replace(path, recovered / name.lstrip("."))

    def path(self, session_id: str) -> Path:
        return self.sessions_dir / f"{validate_session_id(session_id)}.jsonl"

    # --- reading -----------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self.path(session_id).exists()

    def _scan(self) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(self.sessions_dir) as it:
                for entry in it:
                    name = entry.name
                    if name.endswith(".jsonl") and not name.startswith("."):
                        yield entry
        except FileNotFoundError:
            return

    def session_ids(self) -> list[str]:
        return [e.name[: -len(".jsonl")] for e in self._scan()]

    def load(self, session_id: str) -> LoadedLog | None:
        path = self.path(session_id)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}", path=str(path)) from exc
        parsed = None
        known = self.catalogue.checked(session_id, st) if len(data) == st.st_size else None
        if known is not None:
            parsed = _trusted_log(data, str(path), *known)
        loaded, header_raw, tail = parsed or _parse_file(session_id, path, data)
        self._headers[session_id] = header_raw
        self._tails[session_id] = tail
        if loaded.point is not None and tail.point_end is not None:
            self._line_ends[session_id] = (loaded.point.seq, tail.point_end)
        return loaded

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        """The index's fork point of a log whose size and mtime still match its entry,
        checked cheaply against the file: the header line is read, and the line ending at
        the recorded offset must be that turn's `turn/end`. Anything else: None."""
        path = self.path(session_id)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            known = self.catalogue.checked(session_id, os.fstat(fd))
            if known is None or known[1].fork is None or known[1].fork_end is None:
                return None
            point, end = known[1].fork, known[1].fork_end
            header_raw = _first_line(fd)
            if header_raw is None or not len(header_raw) < end:
                return None
            header = _header_of(header_raw)
            line = _line_before(fd, end)
        except OSError:
            return None
        finally:
            os.close(fd)
        if header is None or header.id != session_id or line is None:
            return None
        if not _ends_turn(line, point):
            return None
        return IndexedFork(header, point, (len(header_raw) + 1, end))

    def summaries(self, skip: set[str], progress: Progress | None = None) -> list[SessionSummary]:
        entries = [e for e in self._scan() if e.name[: -len(".jsonl")] not in skip]
        return self.catalogue.summaries(entries, self._summarize, progress)

    def _summarize(self, path: Path) -> tuple[SessionSummary, LogFacts | None]:
        loaded, _, tail = _parse_file(path.name[: -len(".jsonl")], path, path.read_bytes())
        assert loaded.summary is not None  # the parser computes it
        return loaded.summary, LogFacts.of(loaded.state, loaded.point, tail.point_end)

    def save_summaries(self, records: Sequence[Remembered]) -> None:
        facts = [
            (r.summary, LogFacts.of(r.state, r.point, self._point_end(r.summary.id, r)))
            for r in records
        ]
        self.catalogue.remember(self.sessions_dir, facts)

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
        if path.exists():
            raise DuplicateSessionId(f"a session {sid!r} exists already", session_id=sid)
        header_raw = orjson.dumps(change.header.to_record())
        rest = b"".join(e.encode() + b"\n" for e in change.events)
        source = self._seed_range(change) if change.copied_from else None
        if source is not None:  # a fork: the seed's bytes are copied, not encoded again
            src_path, start, end = source

            def write(fd: int) -> None:
                write_all(fd, header_raw + b"\n")
                with open(src_path, "rb") as src:
                    _copy_range(src.fileno(), fd, start, end - start)
                write_all(fd, rest)

            write_file_atomically(path, write, overwrite=False)
            if change.seed:
                self._line_ends[sid] = (len(change.seed), len(header_raw) + 1 + end - start)
        else:
            body = b"".join(line + b"\n" for line in event_lines(change.seed))
            write_file_atomically(path, header_raw + b"\n" + body + rest, overwrite=False)
        self._headers[sid] = header_raw
        self._tails[sid] = _Tail(0, None, False)

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
        """The file offset just past the line of the last of `events` (a prefix of the
        session's log), when the file is laid out exactly as header + one line per event
        (as this backend writes it). Checked cheaply: the line at the computed place must
        be that event's, byte for byte. Anything else (blank lines, a hand-written layout)
        returns None."""
        header_raw = self._headers.get(session_id)
        if header_raw is None or session_id not in self._tails or not events:
            return None
        last = events[-1].raw
        if last is None:
            return None
        end = len(header_raw) + 1 + lines_length(events)
        try:
            with open(self.path(session_id), "rb") as fh:
                fh.seek(end - len(last) - 2)
                found = fh.read(len(last) + 2)
        except OSError:
            return None
        return end if found == b"\n" + last + b"\n" else None

    def _append(self, change: EventsAppended) -> None:
        sid = change.session_id
        path = self.path(sid)
        tail = self._tails.get(sid)
        if tail is not None and tail.torn is not None:
            self._set_aside_torn_tail(sid, path, tail)
        prefix = b"\n" if tail is not None and tail.needs_newline else b""
        data = prefix + b"\n".join(e.encode() for e in change.events) + b"\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        size_before = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError:
            _undo_append(fd, size_before)
            raise
        self._pending[sid] = _Pending(fd, size_before)
        if tail is not None:
            tail.needs_newline = False

    def _flush(self, session_id: str) -> None:
        pending = self._pending.pop(session_id, None)
        if pending is None:
            return
        try:
            os.fsync(pending.fd)
        except OSError:
            _undo_append(pending.fd, pending.size_before)
            raise
        os.close(pending.fd)

    def _set_aside_torn_tail(self, session_id: str, path: Path, tail: _Tail) -> None:
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
        recovered.mkdir(mode=DIR_MODE, exist_ok=True)
        stamp = now_ts().replace(":", "").replace(".", "")
        keep = recovered / f"{session_id}.{stamp}.torn-tail"
        write_file_atomically(keep, torn, overwrite=False)

    def _rewrite(
        self, session_id: str, kept: Sequence[Event], header: SessionHeader | None
    ) -> None:
        path = self.path(session_id)
        tail = self._tails.get(session_id)
        if tail is not None and tail.torn is not None:
            self._keep_torn_tail(session_id, tail.torn)  # the rewrite must not drop it
        header_raw = self._headers.get(session_id)
        if header_raw is None:
            header_raw = path.read_bytes().split(b"\n", 1)[0]
        if header is not None and SessionHeader.from_record(orjson.loads(header_raw)) != header:
            header_raw = orjson.dumps(header.to_record())
        body = [header_raw, *event_lines(kept)]
        write_file_atomically(path, b"\n".join(body) + b"\n")
        self._headers[session_id] = header_raw
        self._tails[session_id] = _Tail(0, None, False)
        self._line_ends.pop(session_id, None)

    def _dispose(self, session_id: str) -> None:
        """Deleting moves the file to `<store>/trash/`: a person can still get it back."""
        trash = self.root / "trash"
        trash.mkdir(mode=DIR_MODE, exist_ok=True)
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

    def close(self) -> None:
        for sid in list(self._pending):
            with contextlib.suppress(OSError):
                self._flush(sid)
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _first_line(fd: int, limit: int = 1 << 20) -> bytes | None:
    """The file's first line (without its newline), if it ends within `limit` bytes."""
    chunk = 1 << 16
    data = b""
    while len(data) < limit:
        more = os.pread(fd, chunk, len(data))
        if not more:
            return None
        data += more
        newline = data.find(b"\n", len(data) - len(more))
        if newline >= 0:
            return data[:newline]
    return None


def _line_before(fd: int, end: int, limit: int = 1 << 16) -> bytes | None:
    """The line that the newline at offset end - 1 closes, if it is shorter than `limit`
    and a newline precedes it (a line of the log after its header)."""
    start = max(0, end - limit)
    data = os.pread(fd, end - start, start)
    if len(data) != end - start or not data.endswith(b"\n"):
        return None
    newline = data.rfind(b"\n", 0, len(data) - 1)
    return data[newline + 1 : -1] if newline >= 0 else None


def _header_of(header_raw: bytes) -> SessionHeader | None:
    """The header a line holds, or None when it is not a valid one."""
    try:
        record = orjson.loads(header_raw)
        if too_deep(header_raw, record):
            return None
        return SessionHeader.from_record(record)
    except (orjson.JSONDecodeError, ForkwiseError):
        return None


def _copy_range(src: int, dst: int, offset: int, count: int) -> None:
    """Copy `count` bytes of `src` from `offset` to the end of `dst`, in the kernel where
    it can (copy_file_range), else through a buffer."""
    copy = getattr(os, "copy_file_range", None)
    while count > 0:
        if copy is not None:
            try:
                done = copy(src, dst, min(count, 1 << 30), offset)
            except OSError:
                copy = None
                continue
        else:
            chunk = os.pread(src, min(count, 1 << 24), offset)
            write_all(dst, chunk)
            done = len(chunk)
        if done <= 0:
            raise OSError("the source file ended before the seed did")
        offset += done
        count -= done


def _undo_append(fd: int, size_before: int) -> None:
    """Put the file back the way it was before a failed append."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size_before)
        os.fsync(fd)
    with contextlib.suppress(OSError):
        os.close(fd)
