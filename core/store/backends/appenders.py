"""Session files kept open for appending, so that an append is a stat, a write and a
flush, not also an open and a close (each a system call that hands the interpreter lock
to another thread; a host's session pool appends from several threads at once).

An appender is *busy* from `acquire` until `release` (its append flushed) or `forget`:
only idle appenders are closed to stay within the limit, so a file descriptor is never
closed, and its number reused by another file, while an append to it is in flight. A
file this process replaces or moves (a rewrite, a deletion, a torn tail cut off through
another handle) must be `forget`-ten first: the descriptor would still point at the old
file. One that someone else deletes or replaces is noticed by its link count: the path
is opened again, as it would be without the cache (and is missing, if it was deleted).
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

    def acquire(self, session_id: str, path: Callable[[], Path]) -> tuple[Appender, int]:
        """The session's appender and its file's size now; opened on `path()` if it is
        not open (or its file was unlinked meanwhile). Busy until `release` or `forget`.
        One append per session at a time (the caller's lock)."""
        with self._lock:
            found = self._open.get(session_id)
            if found is not None:
                self._open.move_to_end(session_id)
                found.busy = True
        if found is not None:
            try:
                st = os.fstat(found.fd)
            except OSError:
                st = None
            if st is not None and st.st_nlink:
                return found, st.st_size
            self.close(session_id)  # deleted or replaced behind our back
        fd = os.open(path(), os.O_WRONLY | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
        except OSError:
            os.close(fd)
            raise
        appender = Appender(fd, busy=True)
        with self._lock:
            self._open[session_id] = appender
            idle = [sid for sid, a in self._open.items() if not a.busy]
            closing = [self._open.pop(sid) for sid in idle[: max(0, len(self._open) - self.limit)]]
        for old in closing:
            with contextlib.suppress(OSError):
                os.close(old.fd)
        return appender, size

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
