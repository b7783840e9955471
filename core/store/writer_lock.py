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
import stat
from collections.abc import Callable
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
                _record_holder(fd)
                return True
        return self._acquire_with_filelock()

    def _open(self) -> tuple[int, bool]:
        """A descriptor of the lock file, and whether this call created it."""
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK  # never a link, never a FIFO's wait
        while True:
            try:
                return os.open(self.path, flags | os.O_CREAT | os.O_EXCL, self.mode), True
            except FileExistsError:
                pass
            try:
                fd = os.open(self.path, flags)
            except FileNotFoundError:
                continue  # removed meanwhile: create it again
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise OSError(errno.EINVAL, f"{self.path} is not a regular file")
            with contextlib.suppress(OSError):
                os.fchmod(fd, self.mode)  # the descriptor's file: no link is followed
            return fd, False

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
                os.ftruncate(fd, 0)  # no longer the holder
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the only descriptor of the open file unlocks it
        if self._fallback is not None:
            lock, self._fallback = self._fallback, None
            lock.release()


def while_free(path: Path, write: Callable[[], object], mode: int = 0o600) -> bool:
    """Run `write` holding the lock on `path` if nobody holds it now, never waiting: how
    a reader refreshes a cache of the store (its index, a replay checkpoint), as no writer
    can be changing the store meanwhile. False, and nothing run, when another process
    holds the lock or the lock file cannot be had (a store this user may only read)."""
    lock = WriterLock(path, mode)
    try:
        if not lock.acquire():
            return False
    except OSError:
        return False
    try:
        write()
    finally:
        lock.release()
    return True


def _record_holder(fd: int) -> None:
    """Write this process's id into the lock file, so that a process refused the lock can
    say which one holds it. Best effort: the lock is what counts, not its content."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def lock_holder(path: Path) -> str | None:
    """Who holds the lock on `path` ("process 123 (forkwise host …)"), or None when nobody
    does. Changes nothing: the file is opened read-only and only tried, never kept."""
    if fcntl is None:  # Windows: filelock says nothing about the holder
        return None  # type: ignore[unreachable]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held
        except OSError:
            return None
        else:
            return None  # nobody holds it (closing the descriptor lets go again)
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if not text.isdigit() or not _alive(int(text)):
        return "another process"  # one that did not say (filelock), or a stale note
    return describe_process(int(text))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def describe_process(pid: int) -> str:
    """`process PID (its command line)`, as far as this system tells."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [a.decode(errors="replace") for a in fh.read(4096).split(b"\0") if a]
    except OSError:
        return f"process {pid}"
    if not argv:
        return f"process {pid}"
    shown = " ".join([os.path.basename(argv[0]), *argv[1:]])
    return f"process {pid} ({shown[:120]})"
