"""A store's writer lock: one writing process per store, on `<store>/writer.lock`.

On POSIX it is flock(2) on that file, the lock the filelock package takes there too (the
two exclude each other, so an older Forkwise and this one never both write), taken here
without importing filelock: its import costs some 15 ms of every writing command, a good
part of a fork's time. Where there is no flock (Windows), or the file system refuses it,
filelock takes the lock as it always did.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: errors of a file system without flock: left to filelock, which knows what to do there
_NO_FLOCK = {errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}


class WriterLock:
    """An exclusive lock on `path`, never waited for: `acquire` says whether it got it."""

    def __init__(self, path: Path, mode: int = 0o600) -> None:
        self.path = path
        self.mode = mode
        self._fd: int | None = None
        self._fallback: Any = None

    def acquire(self) -> bool:
        """True once this process holds the lock; False when another one does. Raises
        OSError when the lock file cannot be opened."""
        if fcntl is not None:
            fd, created = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            except OSError as exc:
                os.close(fd)
                if exc.errno not in _NO_FLOCK:
                    raise
                if created:  # filelock finds the place as it would have without us
                    with contextlib.suppress(OSError):
                        os.unlink(self.path)
            else:
                self._fd = fd
                return True
        return self._acquire_with_filelock()

    def _open(self) -> tuple[int, bool]:
        """A descriptor of the lock file, and whether this call created it."""
        while True:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, self.mode), True
            except FileExistsError:
                pass
            try:
                return os.open(self.path, os.O_RDWR), False
            except FileNotFoundError:
                continue  # removed meanwhile: create it again

    def _acquire_with_filelock(self) -> bool:
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return False
        self._fallback = lock
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the only descriptor of the open file unlocks it
        if self._fallback is not None:
            lock, self._fallback = self._fallback, None
            lock.release()
