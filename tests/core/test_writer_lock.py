"""The store's writer lock, and that it excludes the filelock package's lock (which older
Forkwise versions took) both ways."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from forkwise.core.store import writer_lock
from forkwise.core.store.writer_lock import WriterLock


def test_one_holder_at_a_time(tmp_path: Path) -> None:
    first, second = WriterLock(tmp_path / "w.lock"), WriterLock(tmp_path / "w.lock")
    assert first.acquire()
    assert not second.acquire()
    first.release()
    assert second.acquire()
    second.release()
    assert stat.S_IMODE((tmp_path / "w.lock").stat().st_mode) == 0o600


def test_it_excludes_filelock_both_ways(tmp_path: Path) -> None:
    ours, theirs = WriterLock(tmp_path / "w.lock"), FileLock(str(tmp_path / "w.lock"), timeout=0)
    assert ours.acquire()
    with pytest.raises(Timeout):
        theirs.acquire()
    ours.release()
    theirs.acquire()
    assert not ours.acquire()
    theirs.release()
    assert ours.acquire()
    ours.release()


@pytest.mark.filterwarnings("ignore:flock not supported:UserWarning")  # filelock says so
def test_without_flock_filelock_takes_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOSYS, "flock is not supported here")

    monkeypatch.setattr(writer_lock.fcntl, "flock", no_flock)
    first, second = WriterLock(tmp_path / "w.lock"), WriterLock(tmp_path / "w.lock")
    assert first.acquire()
    assert first._fallback is not None
    assert not second.acquire()
    first.release()
    assert second.acquire()
    second.release()


def test_other_flock_errors_are_not_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int, operation: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(writer_lock.fcntl, "flock", broken)
    with pytest.raises(OSError, match="I/O error"):
        WriterLock(tmp_path / "w.lock").acquire()
