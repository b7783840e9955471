"""Appends from several threads: durable one session at a time, never all behind one flush
or one write; a fork of a session waits for the change to it in flight."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from held_flush import HeldFlushes
from logdata import turn

from forkwise.core.store.backend import Backend
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session import EventsAppended
from forkwise.core.store.session_store import SessionStore

WAIT = 10.0  # seconds: a bound on every wait, never reached when the store behaves


@pytest.fixture(params=["memory", "jsonl"])
def inner(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return MemoryBackend() if request.param == "memory" else JsonlBackend(tmp_path / "store")


def test_a_slow_flush_holds_up_only_its_own_session(inner: Backend) -> None:
    backend = HeldFlushes(inner, "slow")
    store = SessionStore(backend)  # type: ignore[arg-type]  # a wrapper of a real backend
    store.create("slow")
    store.create("fast")
    done: list[object] = []
    writer = threading.Thread(target=lambda: done.append(store.append("slow", turn("s1"))))
    writer.start()
    try:
        assert backend.flushing.wait(WAIT)
        # while "slow" waits for its flush, the other session is written and read
        store.append("fast", turn("f1"))
        assert store.last_seq("fast") == 4
        assert store.last_seq("slow") == 0  # not durable yet: not visible yet
        assert done == []
    finally:
        backend.release.set()
        writer.join(WAIT)
    assert len(done) == 1
    assert store.last_seq("slow") == 4
    store.close()


def test_a_slow_write_holds_up_only_its_own_session(inner: Backend) -> None:
    backend = HeldFlushes(inner, "slow", EventsAppended)
    store = SessionStore(backend)  # type: ignore[arg-type]  # a wrapper of a real backend
    store.create("slow")
    store.create("fast")
    writer = threading.Thread(target=store.append, args=("slow", turn("s1")))
    writer.start()
    other = threading.Thread(target=store.append, args=("fast", turn("f1")))
    try:
        assert backend.flushing.wait(WAIT)
        # the write of "slow" waits (on a disk busy with another file's flush, say):
        # other sessions are written and every session is read meanwhile
        other.start()
        other.join(WAIT)
        assert not other.is_alive()
        assert store.last_seq("fast") == 4
        assert store.get("slow").last_seq == 0
    finally:
        backend.release.set()
        writer.join(WAIT)
    assert store.last_seq("slow") == 4
    store.close()


def test_a_fork_waits_for_the_append_in_flight_and_continues_from_it(inner: Backend) -> None:
    backend = HeldFlushes(inner, "")
    store = SessionStore(backend)  # type: ignore[arg-type]  # a wrapper of a real backend
    store.create("src")
    store.append("src", turn("t0"))
    backend.held = "src"
    writer = threading.Thread(target=store.append, args=("src", turn("t1")))
    children: list[str] = []
    forker = threading.Thread(target=lambda: children.append(store.fork("src").id))
    writer.start()
    try:
        assert backend.flushing.wait(WAIT)
        forker.start()
        forker.join(0.2)
        assert forker.is_alive()  # the source's change in flight is not forked half
    finally:
        backend.release.set()
        writer.join(WAIT)
        forker.join(WAIT)
    # the fork came after the append: the child has both turns and goes on from them
    (child,) = children
    events = store.get(child).events
    assert [e.seq for e in events] == list(range(1, 10))
    assert [e.get("turn") for e in events if e.type == "turn/end"] == ["t0", "t1"]
    store.append(child, turn("t2"))
    assert store.last_seq(child) == 13
    store.close()


def test_appends_from_many_threads_all_land_in_order(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = SessionStore(JsonlBackend(root))
    sessions = [f"s{i}" for i in range(4)]
    for sid in sessions:
        store.create(sid)
    failures: list[BaseException] = []

    def work(sid: str, worker: int) -> None:
        try:
            for t in range(10):
                store.append(sid, turn(f"{sid}-{worker}-{t}"))
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=work, args=(sid, w)) for sid in sessions for w in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 3)
    assert failures == []
    for sid in sessions:
        events = store.get(sid).events
        assert [e.seq for e in events] == list(range(1, 81))
        turns = [e.get("turn") for e in events if e.type == "turn/start"]
        assert len(set(turns)) == 20  # each turn whole: brackets never interleave
    store.close()
    for sid in sessions:
        loaded, _, _ = parse_log((root / "sessions" / f"{sid}.jsonl").read_bytes(), sid)
        assert len(loaded.events) == 80
