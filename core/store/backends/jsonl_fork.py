"""Forks by byte copy in the JSON Lines backend: a child's seed is the source file's bytes
from the end of its header to the end of the seed's last line, copied in the kernel where
it can be, never encoded again. Where that range ends is known from the index (checked
cheaply against the file: `indexed_fork`) or computed from the events' line lengths
(checked byte for byte: `line_end`); a file laid out otherwise (blank lines, a
hand-written layout) gets None, and its seed is encoded event by event.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from forkwise.core.errors import StaleSession
from forkwise.core.log.digest import span_digest
from forkwise.core.log.event_log import lines_length
from forkwise.core.log.events import Event
from forkwise.core.safe_read import open_regular
from forkwise.core.store.atomic import write_all, write_file_atomically
from forkwise.core.store.backend import IndexedFork
from forkwise.core.store.backends.catalogue import Catalogue
from forkwise.core.store.backends.jsonl_read import ends_turn, header_of


def indexed_fork(path: Path, session_id: str, catalogue: Catalogue) -> IndexedFork | None:
    """The index's fork point of a log whose size and mtime still match its entry,
    checked cheaply against the file: the header line is read, and the line ending at
    the recorded offset must be that turn's `turn/end`. Anything else: None."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        known = catalogue.checked(session_id, os.fstat(fd))
        if known is None or known[1].fork is None or known[1].fork_end is None:
            return None
        point, end = known[1].fork, known[1].fork_end
        header_raw = first_line(fd)
        if header_raw is None or not len(header_raw) < end:
            return None
        header = header_of(header_raw)
        line = line_before(fd, end)
        # the child records the digest of the lines it copies (read from the page cache
        # the copy reads next; linear, like the copy)
        digest = span_digest(fd, len(header_raw) + 1, end)
    except OSError:
        return None
    finally:
        os.close(fd)
    if header is None or header.id != session_id or line is None:
        return None
    if not ends_turn(line, point):
        return None
    facts = known[1]
    return IndexedFork(
        header,
        point,
        (len(header_raw) + 1, end),
        known[0],
        bool(facts.pending_approvals),
        digest,
    )


def line_end(path: Path, header_raw: bytes, events: Sequence[Event]) -> int | None:
    """The file offset just past the line of the last of `events` (a prefix of the log in
    `path`, whose header line is `header_raw`), when the file is laid out exactly as header
    + one line per event (as the backend writes it). Checked cheaply: the line at the
    computed place must be that event's, byte for byte. Anything else (blank lines, a
    hand-written layout) returns None."""
    if not events:
        return None
    last = events[-1].raw
    if last is None:
        return None
    end = len(header_raw) + 1 + lines_length(events)
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        found = os.pread(fd, len(last) + 2, end - len(last) - 2)
    except OSError:
        return None
    finally:
        os.close(fd)
    return end if found == b"\n" + last + b"\n" else None


def write_fork(
    path: Path,
    header_raw: bytes,
    source: tuple[Path, int, int],
    rest: bytes,
    *,
    expect: object = None,
    identity: Callable[[os.stat_result], object] = lambda st: None,
) -> None:
    """Create the child's file `path` (atomically, never over an existing one): its header
    line, the seed's bytes copied from `source` (path, start and end offsets), then `rest`
    (its own events, already encoded). With `expect`, the source file must still be that
    (`identity` of its stat): a file changed since the store read it is not copied from."""
    src_path, start, end = source

    def write(fd: int) -> None:
        write_all(fd, header_raw + b"\n")
        src = open_regular(src_path)
        try:
            if expect is not None and identity(os.fstat(src)) != expect:
                raise StaleSession(
                    f"{src_path} changed on disk since it was read; read it again",
                    path=str(src_path),
                )
            copy_range(src, fd, start, end - start)
        finally:
            os.close(src)
        write_all(fd, rest)

    write_file_atomically(path, write, overwrite=False)


def first_line(fd: int, limit: int = 1 << 20) -> bytes | None:
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


def line_before(fd: int, end: int, limit: int = 1 << 16) -> bytes | None:
    """The line that the newline at offset end - 1 closes, if it is shorter than `limit`
    and a newline precedes it (a line of the log after its header)."""
    start = max(0, end - limit)
    data = os.pread(fd, end - start, start)
    if len(data) != end - start or not data.endswith(b"\n"):
        return None
    newline = data.rfind(b"\n", 0, len(data) - 1)
    return data[newline + 1 : -1] if newline >= 0 else None


def copy_range(src: int, dst: int, offset: int, count: int) -> None:
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
