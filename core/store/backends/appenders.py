"""Session files kept open for appending, so that an append is a write, a stat and a
flush, not also an open and a close (each a system call that hands the interpreter lock
to another thread; a host's session pool appends from several threads at once).

An appender is *busy* from `acquire` until `release` (its append flushed) or `forget`:
only idle appenders are closed to stay within the limit, so a file descriptor is never
closed, and its number reused by another file, while an append to it is in flight. A
file this process replaces or moves (a rewrite, a deletion, a torn tail cut off through
another handle) must be `forget`-ten first: the descriptor would still point at the old
file. One that someone else deletes or replaces is noticed by its link count after the
write (`written`): the write went to a file no path leads to any more, so the path is
opened again and written, as it would be without the cache (and is missing, if it was
deleted). One stat after the write, not one before it too: it gives the link count, the
size before the write (the size after, less what was written: only this process writes
the file, under the store's writer lock) and the identity the backend keeps.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: appenders kept open at most (the least recently used idle ones are closed first)
OPEN_APPENDERS = 32


@dataclass(slots=True)
class Appender:
    fd: int
    busy: bool = False


class Appenders:
    def __init__(self, limit: int = OPEN_APPENDERS) -> None:
        self.limit = limit
        self._open: OrderedDict[str, Appender] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, session_id: object) -> bool:
        """Whether the session's file is open for appending."""
        return session_id in self._open

    def acquire(self, session_id: str, path: Callable[[], Path]) -> tuple[Appender, bool]:
        """The session's appender, and whether it was open already (else it is opened on
        `path()` now). Busy until `release` or `forget`. One append per session at a time
        (the caller's lock)."""
        with self._lock:
            found = self._open.get(session_id)
            if found is not None:
                self._open.move_to_end(session_id)
                found.busy = True
                return found, True
        fd = os.open(path(), os.O_WRONLY | os.O_APPEND)
        appender = Appender(fd, busy=True)
        with self._lock:
            self._open[session_id] = appender
            idle = [sid for sid, a in self._open.items() if not a.busy]
            closing = [self._open.pop(sid) for sid in idle[: max(0, len(self._open) - self.limit)]]
        for old in closing:
            with contextlib.suppress(OSError):
                os.close(old.fd)
        return appender, False

    def written(
        self, session_id: str, path: Callable[[], Path], data: bytes
    ) -> tuple[Appender, os.stat_result]:
        """Append `data` to the session's file (whole, or OSError), through its appender;
        returns the appender (busy) and the file's stat after the write. A file unlinked
        behind our back since it was opened is opened again on `path()` and written
        there. On OSError the appender is forgotten and its descriptor closed, the file
        cut back to its size before the write."""
        appender, cached = self.acquire(session_id, path)
        while True:
            done = 0
            try:
                view = memoryview(data)
                while view:
                    n = os.write(appender.fd, view)
                    done += n
                    view = view[n:]
                st = os.fstat(appender.fd)
            except OSError:
                self.forget(session_id)
                _cut_back(appender.fd, done)
                raise
            if st.st_nlink or not cached:
                return appender, st
            self.close(session_id)  # deleted or replaced: the write reached no path
            appender, cached = self.acquire(session_id, path)

    def release(self, session_id: str) -> None:
        """The session's append is done (flushed): its appender may be closed."""
        with self._lock:
            found = self._open.get(session_id)
            if found is not None:
                found.busy = False

    def forget(self, session_id: str) -> Appender | None:
        """Stop keeping the session's file open; returns the appender, whose descriptor
        the caller now owns (None when it was not open)."""
        with self._lock:
            return self._open.pop(session_id, None)

    def close(self, session_id: str) -> None:
        """`forget`, and close the descriptor."""
        found = self.forget(session_id)
        if found is not None:
            with contextlib.suppress(OSError):
                os.close(found.fd)

    def close_all(self) -> None:
        with self._lock:
            found, self._open = list(self._open.values()), OrderedDict()
        for appender in found:
            with contextlib.suppress(OSError):
                os.close(appender.fd)


@dataclass(slots=True)
class Pending:
    """An append written but not yet fsynced, and the size to go back to on failure."""

    fd: int
    size_before: int
    #: the append's note and what it held before (`unfinished`), to put back on failure
    note: tuple[Path, bytes | None] | None = None


def undo_append(pending: Pending) -> None:
    """Put the file back the way it was before a failed append, and close its
    descriptor (the caller `forget`s its appender first)."""
    _cut_to(pending.fd, pending.size_before)


def _cut_back(fd: int, written: int) -> None:
    """Take back the `written` bytes a failed append put at the end of `fd`'s file, and
    close `fd`."""
    size = None
    if written:
        with contextlib.suppress(OSError):
            size = os.fstat(fd).st_size - written
    _cut_to(fd, size)


def _cut_to(fd: int, size: int | None) -> None:
    """Cut `fd`'s file to `size` bytes and fsync it (None: leave it as it is), then close
    `fd`, whatever the cut did."""
    with contextlib.suppress(OSError):
        if size is not None:
            os.ftruncate(fd, size)
            os.fsync(fd)
    with contextlib.suppress(OSError):
        os.close(fd)
