"""Simulated I/O failures (disk full, permission denied, I/O error) in the JSONL backend.

For every operation, the system calls it makes are counted on a dry run; then each call in
turn is made to fail (the Nth os.write, os.fsync, os.replace, os.link or os.open). Every
time: a storage-error, the files on disk exactly as before, and a store that still works.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from logdata import SAMPLE, events_of, file_bytes, tree, turn

from forkwise.core.errors import ForkwiseError
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import SessionStore

CALLS = ("write", "fsync", "replace", "link", "open")
ERRNOS = {"write": errno.ENOSPC, "fsync": errno.EIO, "replace": errno.EACCES,
          "link": errno.EACCES, "open": errno.EACCES}  # fmt: skip


class Injector:
    """Wraps os.<name> calls: counts them, and fails the armed one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[str] = Counter()
        self.armed: tuple[str, int, bool] | None = None
        self.fired = False
        self.active = False
        for name in CALLS:
            monkeypatch.setattr(os, name, self._wrap(name, getattr(os, name)))

    def _wrap(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return real(*args, **kwargs)
            self.counts[name] += 1
            if self.armed is not None and not self.fired:
                target, n, short = self.armed
                if target == name and self.counts[name] == n:
                    self.fired = True
                    if short and name == "write" and len(args[1]) > 1:
                        # a short write: half the bytes reach the file, the next write fails
                        self.armed = ("write", n + 1, False)
                        self.fired = False
                        return real(args[0], bytes(args[1][: len(args[1]) // 2]))
                    raise OSError(ERRNOS[name], os.strerror(ERRNOS[name]))
            return real(*args, **kwargs)

        return call

    def run(self, op: Callable[[], Any], arm: tuple[str, int, bool] | None = None) -> Any:
        self.counts.clear()
        self.armed, self.fired, self.active = arm, False, True
        try:
            return op()
        finally:
            self.active = False


@dataclass
class Scenario:
    name: str
    setup: Callable[[Path], None]
    op: Callable[[SessionStore], Any]
    check: Callable[[SessionStore], None]


def base(root: Path) -> None:
    store = SessionStore(JsonlBackend(root))
    store.create("src", cwd="/p", meta={"title": "src"})
    store.append("src", SAMPLE)
    store.fork("src", 13, "kid")
    store.close()


def no_newline(root: Path) -> None:
    base(root)
    (root / "sessions" / "bare.jsonl").write_bytes(
        file_bytes("bare", events_of(turn("t1"))).rstrip(b"\n")
    )


def count_is(sid: str, n: int) -> Callable[[SessionStore], None]:
    def check(store: SessionStore) -> None:
        assert store.get(sid).last_seq == n

    return check


def absent(sid: str) -> Callable[[SessionStore], None]:
    def check(store: SessionStore) -> None:
        assert not store.exists(sid)

    return check


SCENARIOS = [
    Scenario("append", base, lambda s: s.append("src", turn("t9", tool=True)), count_is("src", 30)),
    Scenario("append-one", base, lambda s: s.append("kid", [{"type": "plugin/a/b"}]),
             count_is("kid", 15)),
    Scenario("append-no-newline", no_newline, lambda s: s.append("bare", turn("t2")),
             count_is("bare", 8)),
    Scenario("fork", base, lambda s: s.fork("src", 13, "child"), count_is("child", 14)),
    Scenario("fork-whole", base, lambda s: s.fork("src", child_id="child"), count_is("child", 23)),
    Scenario("fork-empty", base, lambda s: s.fork("src", 0, "child"), count_is("child", 1)),
    Scenario("create", base, lambda s: s.create("new", seed=events_of(turn("t1"))),
             count_is("new", 4)),
    Scenario("truncate", base, lambda s: s.truncate("src", 13), count_is("src", 13)),
    Scenario("truncate-seed", base, lambda s: s.truncate("kid", 2), count_is("kid", 2)),
    Scenario("delete", base, lambda s: s.delete("src"), absent("src")),
]  # fmt: skip


def target(scenario: Scenario) -> str:
    """The session an operation works on (loaded first, as it is when in use)."""
    return {"append-one": "kid", "append-no-newline": "bare", "truncate-seed": "kid"}.get(
        scenario.name, "src"
    )


def plans(injector: Injector, scenario: Scenario, root: Path) -> list[tuple[str, int, bool]]:
    """Dry run: which calls the operation makes, so that each can be failed in turn."""
    scenario.setup(root)
    store = SessionStore(JsonlBackend(root))
    store.get(target(scenario))
    injector.run(lambda: scenario.op(store))
    store.close()
    out = [(name, n, False) for name in CALLS for n in range(1, injector.counts[name] + 1)]
    out += [("write", n, True) for n in range(1, injector.counts["write"] + 1)]
    return out


def logs_of(store: SessionStore) -> dict[str, tuple[Any, ...]]:
    return {sid: tuple(e.encode() for e in store.get(sid).events) for sid in store.ids()}


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Injector:
    return Injector(monkeypatch)


FAULTS_INJECTED: Counter[str] = Counter()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_failing_call_leaves_the_disk_as_it_was(
    scenario: Scenario, injector: Injector, tmp_path: Path
) -> None:
    schedule = plans(injector, scenario, tmp_path / "dry")
    assert schedule, "the operation made no system calls"
    for i, arm in enumerate(schedule):
        root = tmp_path / f"run{i}"
        scenario.setup(root)
        store = SessionStore(JsonlBackend(root))
        store.get(target(scenario))
        before_logs = logs_of(store)
        before = tree(root)
        result = injector.run(partial(_attempt, scenario, store), arm)
        FAULTS_INJECTED[scenario.name] += 1
        if not injector.fired:
            # the call only happened on the dry run (e.g. a directory created there)
            assert not isinstance(result, ForkwiseError), (arm, result)
            store.close()
            continue
        if arm[0] == "open" and not isinstance(result, ForkwiseError):
            # a read that failed and was done another way: a fork whose source cannot be
            # opened for a byte copy encodes its seed instead; the result must be whole
            store.close()
            again = SessionStore(JsonlBackend(root))
            assert all(row.error is None for row in again.list()), arm
            again.close()
            continue
        assert isinstance(result, ForkwiseError), (arm, result)
        assert result.code == "storage-error", (arm, result)
        assert tree(root) == before, arm
        # the store that saw the failure still works, and agrees with the disk
        assert logs_of(store) == before_logs, arm
        assert store.list()
        scenario.op(store)
        scenario.check(store)
        after = logs_of(store)
        store.close()
        again = SessionStore(JsonlBackend(root))
        assert logs_of(again) == after, arm
        for row in again.list():
            snap = again.get(row.id)
            assert row.error is None
            assert row == SessionSummary.start(snap.header).fold(snap.events)
        again.close()


def _attempt(scenario: Scenario, store: SessionStore) -> Any:
    try:
        return scenario.op(store)
    except ForkwiseError as exc:
        return exc


def _append_t9(store: SessionStore) -> Any:
    try:
        return store.append("src", turn("t9"))
    except ForkwiseError as exc:
        return exc


def test_a_failed_append_leaves_the_old_snapshot_usable(injector: Injector, tmp_path: Path) -> None:
    """An append that failed changed nothing, so what a caller holds is not stale."""
    base(tmp_path)
    store = SessionStore(JsonlBackend(tmp_path))
    snap = store.get("src")
    result = injector.run(lambda: _append_t9(store), ("fsync", 1, False))
    assert isinstance(result, ForkwiseError)
    assert result.code == "storage-error"
    child = store.fork(snap, 13, "child")
    assert child.header.seed_length == 13
    store.close()


@pytest.mark.parametrize("arm", [(name, n, False) for name in CALLS for n in (1, 2, 3, 4)])
def test_a_torn_tail_is_never_lost_when_the_next_append_fails(
    injector: Injector, tmp_path: Path, arm: tuple[str, int, bool]
) -> None:
    base(tmp_path)
    torn = b'{"seq":23,"type":"mess'
    path = tmp_path / "sessions" / "src.jsonl"
    with path.open("ab") as fh:
        fh.write(torn)
    store = SessionStore(JsonlBackend(tmp_path))
    store.get("src")
    result = injector.run(lambda: _append_t9(store), arm)
    store.close()
    if injector.fired:
        assert isinstance(result, ForkwiseError)
        assert result.code == "storage-error"
    recovered = tmp_path / "recovered"
    kept = [p.read_bytes() for p in recovered.iterdir()] if recovered.exists() else []
    assert torn in [path.read_bytes()[-len(torn) :], *kept]
    store = SessionStore(JsonlBackend(tmp_path))
    assert store.get("src").last_seq == (22 if injector.fired else 26)
    store.close()
