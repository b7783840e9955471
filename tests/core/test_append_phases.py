"""An append in three phases (`SessionStore.start_append`, `flush_append`,
`commit_append`), as the host's event loop makes it: written at once, flushed on a
worker, committed on the loop. Readers and subscribers see the events only once they are
durable, as with `append`; a phase that would wait is refused with nothing done; a
caller that stops waiting leaves nothing half done (`settle_append`)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from held_flush import HeldFlushes
from logdata import turn

from forkwise.core.errors import StorageError
from forkwise.core.store.appending import StartedAppend
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import EventsAppended, SessionFlushed, StoreEvent
from forkwise.core.store.session_store import SessionStore

WAIT = 10.0


def warm_store(root: Path) -> SessionStore:
    """A store with session "s" loaded and appended to once (its file open for appending,
    as a live session's is)."""
    store = SessionStore(JsonlBackend(root))
    store.create("s", cwd="/p")
    store.append("s", turn("t0"))
    return store


def log_file(root: Path) -> Path:
    return root / "sessions" / "s.jsonl"


def started(store: SessionStore, drafts: list[dict[str, object]]) -> StartedAppend:
    begun = store.start_append("s", drafts)
    assert begun is not None
    return begun


def test_events_are_seen_only_once_flushed_and_committed(tmp_path: Path) -> None:
    store = warm_store(tmp_path)
    told: list[StoreEvent] = []
    store.subscribe(told.append)
    before, size = store.get("s"), log_file(tmp_path).stat().st_size
    row = store.summary("s")
    begun = started(store, turn("t1"))
    assert begun.written  # into the file at once: nothing else was needed
    assert log_file(tmp_path).stat().st_size > size
    for phase in ("started", "flushed"):
        assert store.last_seq("s") == before.last_seq, phase
        assert store.events_since("s", before.last_seq) == (), phase
        assert store.summary("s") == row, phase
        assert told == [], phase
        if phase == "started":
            store.flush_append(begun)
    snap, seen = store.commit_append(begun, lambda: "observed") or (None, None)
    assert seen == "observed"
    assert snap is not None
    assert snap.last_seq == before.last_seq + len(turn("t1"))
    assert store.get("s").last_seq == snap.last_seq
    assert [type(c) for c in told] == [EventsAppended, SessionFlushed]
    store.close()
    again = SessionStore(JsonlBackend(tmp_path))
    assert [e.encode() for e in again.get("s").events] == [e.encode() for e in snap.events]
    again.close()


def test_a_session_not_loaded_or_being_written_is_not_started(tmp_path: Path) -> None:
    store = warm_store(tmp_path)
    store.close()
    backend = HeldFlushes(JsonlBackend(tmp_path), held="s")
    store = SessionStore(backend)  # type: ignore[arg-type]  # wraps a real backend
    assert store.start_append("s", turn("t1")) is None  # not loaded: it would read
    store.get("s")
    writing = threading.Thread(target=store.append, args=("s", turn("t1")))
    writing.start()
    try:
        assert backend.flushing.wait(WAIT)
        size = log_file(tmp_path).stat().st_size
        last = store.last_seq("s")
        assert store.start_append("s", turn("t2")) is None  # its write lock is taken
        assert log_file(tmp_path).stat().st_size == size
        assert store.last_seq("s") == last
    finally:
        backend.release.set()
        writing.join(WAIT)
    begun = started(store, turn("t2"))
    store.flush_append(begun)
    assert store.commit_append(begun, lambda: None) is not None
    assert store.get("s").last_seq == last + 2 * len(turn("t1"))
    store.close()


def test_a_commit_that_would_wait_for_the_store_is_refused_then_made(tmp_path: Path) -> None:
    store = warm_store(tmp_path)
    store.create("other", cwd="/p")
    store.close()
    backend = HeldFlushes(JsonlBackend(tmp_path), held="other")
    store = SessionStore(backend)  # type: ignore[arg-type]  # wraps a real backend
    store.get("s")
    store.append("s", turn("t1"))  # opens its file for appending
    begun = started(store, turn("t2"))
    store.flush_append(begun)
    # another thread holds the store lock (a flush of several sessions, held here)
    busy = threading.Thread(target=store.flush, args=(["other"],))
    busy.start()
    try:
        assert backend.flushing.wait(WAIT)
        assert store.commit_append(begun, lambda: None, wait=False) is None
    finally:
        backend.release.set()
        busy.join(WAIT)
    done = store.commit_append(begun, lambda: None, wait=False)
    assert done is not None
    assert done[0].last_seq == store.last_seq("s")
    with pytest.raises(RuntimeError):
        store.commit_append(begun, lambda: None)  # once only
    store.close()


@pytest.mark.parametrize("flushed", [False, True])
def test_settling_finishes_what_a_cancelled_caller_left(tmp_path: Path, flushed: bool) -> None:
    store = warm_store(tmp_path)
    last = store.last_seq("s")
    begun = started(store, turn("t1"))
    if flushed:
        store.flush_append(begun)
    settle = threading.Thread(target=store.settle_append, args=(begun,))
    settle.start()
    settle.join(WAIT)
    assert not settle.is_alive()
    store.flush_append(begun)  # the caller's own flush, come late: nothing more
    store.settle_append(begun)  # and again: nothing more
    assert store.last_seq("s") == last + len(turn("t1"))
    store.append("s", turn("t2"))  # the write lock is free
    store.close()
    again = SessionStore(JsonlBackend(tmp_path))
    assert again.get("s").last_seq == last + 2 * len(turn("t1"))
    again.close()


def test_a_flush_that_fails_fails_the_append_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = warm_store(tmp_path)
    before, size = store.get("s"), log_file(tmp_path).stat().st_size
    begun = started(store, turn("t1"))

    def failing(fd: int) -> None:  # the disk reports an I/O error on this flush
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", failing)
        with pytest.raises(StorageError):
            store.flush_append(begun)
    assert log_file(tmp_path).stat().st_size == size  # cut back to its durable size
    assert store.get("s").last_seq == before.last_seq
    store.settle_append(begun)  # a failed append is not committed by anyone
    assert store.get("s").last_seq == before.last_seq
    store.append("s", turn("t2"))  # and the session is free again
    assert store.get("s").last_seq == before.last_seq + len(turn("t2"))
    store.close()
