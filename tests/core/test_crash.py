"""Crash safety: a real writer process is SIGKILLed at random moments, over and over.

After every kill the store must open, every session must be readable (a torn tail is
allowed and reported; anything else is not), every acknowledged event must be on disk
exactly once, an unacknowledged operation must be wholly there or wholly absent (a child
file complete or missing), the index must agree with the logs, and no torn bytes may be
lost. The model of what is on disk is built only from what the writer acknowledged.

Run on a JSONL folder and on a PostgreSQL database (the host killed, the server not).
Bounded by default; FORKWISE_LONG=1 (or FORKWISE_CRASH_KILLS=N) runs longer.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from store_harness import LONG

from forkwise.core.errors import ForkwiseError
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.opening import open_backend
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import SessionStore

WRITER = Path(__file__).with_name("crash_writer.py")
KILLS = int(os.environ.get("FORKWISE_CRASH_KILLS", "1000" if LONG else "200"))
Model = dict[str, list[Any]]


def identity(event: Any) -> Any:
    if event.type == "history/fork":
        return ("fork", event.get("source"), event.get("boundary"))
    return event.get("k")


def apply(model: Model, op: dict[str, Any], keys: int | None = None) -> None:
    """Apply an operation the writer announced; `keys` = how many of an append's events."""
    kind = op["op"]
    if kind == "create":
        model[op["sid"]] = []
    elif kind == "append":
        model[op["sid"]] += op["keys"][: keys if keys is not None else len(op["keys"])]
    elif kind == "fork":
        model[op["child"]] = [*model[op["src"]][: op["b"]], ("fork", op["src"], op["b"])]
    elif kind == "truncate":
        del model[op["sid"]][op["b"] :]
    elif kind == "delete":
        del model[op["sid"]]


def alternatives(model: Model, pending: dict[str, Any] | None) -> list[Model]:
    """Every state the disk may be in: the acknowledged one, or with the pending operation
    done (an append possibly cut after any whole line)."""
    out = [model]
    if pending is None or pending["op"] == "list":
        return out
    counts = range(1, len(pending["keys"]) + 1) if pending["op"] == "append" else [None]
    for n in counts:
        other = {sid: list(v) for sid, v in model.items()}
        apply(other, pending, n)
        out.append(other)
    return out


def read_disk(root: Path | str, stats: dict[str, int], torn_seen: dict[bytes, str]) -> Model:
    store = SessionStore(open_backend(root))  # opens writable: the kill released the lock
    try:
        rows = {row.id: row for row in store.list()}  # before any log is loaded: the index
        disk: Model = {}
        for sid in store.ids():
            session = store.get(sid)  # raises on anything but a torn tail
            torn = store.torn_tail(sid)
            if torn is not None:
                stats["torn"] += 1
                torn_seen[torn] = sid
            ids = [identity(e) for e in session.events]
            keys = [k for k in ids if isinstance(k, str)]
            assert len(keys) == len(set(keys)), f"{sid}: an event is on disk twice"
            disk[sid] = ids
            row = rows[sid]
            assert row.error is None, row.error
            assert row == SessionSummary.start(session.header).fold(session.events), sid
        assert set(rows) == set(disk)
        return disk
    finally:
        store.close()


def leftovers(root: Path) -> list[str]:
    sessions = root / "sessions"
    return (
        sorted(p.name for p in sessions.iterdir() if p.name.startswith("."))
        if sessions.exists()
        else []
    )


@pytest.mark.parametrize("kind", ["jsonl", "postgres"])
def test_sigkill_at_random_moments_loses_nothing(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(int(os.environ.get("FORKWISE_CRASH_SEED", "20260101")))
    root: Path | str = tmp_path / "store"
    kills = KILLS
    if kind == "postgres":  # a connection per writer: slower to start than a folder
        root, kills = request.getfixturevalue("pg_url"), max(1, KILLS // 5)
    model: Model = {}
    stats = {"kills": 0, "torn": 0, "acked": 0, "pending_done": 0, "pending_absent": 0}
    torn_seen: dict[bytes, str] = {}
    errors_path = tmp_path / "writer.err"
    # a bound against a hang, not a speed check (a kill takes ~0.25 s on a quiet machine)
    deadline = time.monotonic() + (3600 if LONG else max(600, 3 * kills))
    for round_no in range(kills):
        assert time.monotonic() < deadline, f"too slow: {round_no} kills"
        errors = errors_path.open("wb")
        proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(root), str(round_no)],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert proc.stdout is not None
        want_acks = rng.choice([1, 1, 2, 3, 5, 8, 13])
        seen: list[bytes] = []
        while sum(b'"ack"' in x for x in seen) < want_acks:
            line = proc.stdout.readline()
            assert line.endswith(b"\n"), errors_path.read_text()
            seen.append(line.rstrip(b"\n"))
        # the kill lands at a random moment of the operations that follow
        time.sleep(rng.random() * rng.choice([0.0005, 0.003, 0.02]))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        errors.close()
        out = proc.stdout.read()  # the rest, including what readline had buffered
        proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL, errors_path.read_text()
        stats["kills"] += 1
        # replay the transcript of this run: acknowledged ops, and at most one pending
        pending: dict[str, Any] | None = None
        for raw in [*seen, *out.split(b"\n")]:
            if not raw.endswith(b"}"):
                continue  # the last, unfinished line of the transcript
            msg = orjson.loads(raw)
            if "begin" in msg:
                assert pending is None
                pending = msg
            elif pending is not None:
                assert msg["ack"] == pending["begin"]
                apply(model, pending)
                stats["acked"] += 1
                pending = None
        disk = read_disk(root, stats, torn_seen)
        options = alternatives(model, pending)
        assert disk in options, (
            pending,
            {k: (v, disk.get(k)) for k, v in model.items() if disk.get(k) != v},
        )
        if pending is not None and pending["op"] != "list":
            stats["pending_done" if disk != model else "pending_absent"] += 1
        model = disk
    print(f"\ncrash harness ({kind}): {stats}, sessions {len(model)}")
    if isinstance(root, str):
        assert stats["torn"] == 0  # a transaction is whole or absent: nothing is torn
        return
    # no torn bytes were lost: each is still at the end of its log or kept in recovered/
    recovered = root / "recovered"
    kept = {p.read_bytes() for p in recovered.iterdir()} if recovered.exists() else set()
    trash = root / "trash"
    trashed = [p.read_bytes() for p in trash.iterdir()] if trash.exists() else []
    for torn, sid in torn_seen.items():
        path = root / "sessions" / f"{sid}.jsonl"
        assert (
            torn in kept
            or (path.exists() and path.read_bytes().endswith(torn))
            or any(data.endswith(torn) for data in trashed)  # deleted with its torn tail
        ), sid
    print(
        f"\ncrash harness: {stats}, sessions {len(model)}, "
        f"events {sum(map(len, model.values()))}, temp files left {len(leftovers(root))}"
    )


FOLLOW_KILLS = int(os.environ.get("FORKWISE_FOLLOW_KILLS", "300" if LONG else "40"))


def test_a_store_following_the_disk_agrees_with_it_after_every_kill(tmp_path: Path) -> None:
    """Issue 18, item 10: a read-only store fed by the store watcher while a real writer
    process is SIGKILLed at random moments (so it follows half-written appends, forks,
    rewrites and deletes as they happen) shows, once it has looked again, exactly what a
    fresh read of the disk shows: the same sessions, rows and events."""
    from forkwise.core.store.watcher import Changes, StoreWatcher

    rng = random.Random(int(os.environ.get("FORKWISE_CRASH_SEED", "20260101")))
    root = tmp_path / "store"
    JsonlBackend(root).close()  # the folders exist before the follower opens
    follower = SessionStore(JsonlBackend(root, writable=False))
    failures: list[BaseException] = []
    kinds: dict[str, int] = {}

    def follow(changes: Changes) -> None:
        for sid in sorted(changes.added | changes.changed | changes.removed):
            try:
                change = follower.follow_disk(sid, sid not in changes.removed)
            except ForkwiseError:
                kinds["unreadable"] = kinds.get("unreadable", 0) + 1
                continue  # caught mid-write (a line half there): read again on the next look
            except BaseException as exc:  # anything else is a bug
                failures.append(exc)
                continue
            kind = change.kind if change is not None else "own"
            kinds[kind] = kinds.get(kind, 0) + 1

    watcher = StoreWatcher(root / "sessions", follow, poll=0.01, use_inotify=False).start()
    try:
        for round_no in range(FOLLOW_KILLS):
            proc = subprocess.Popen(
                [sys.executable, str(WRITER), str(root), str(round_no)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            assert proc.stdout is not None
            for _ in range(rng.choice([1, 2, 4, 8, 16])):
                if not proc.stdout.readline():
                    break
            time.sleep(rng.random() * rng.choice([0.0005, 0.003, 0.02]))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            watcher.look_now()  # settle: whatever the thread has not seen yet
            fresh = SessionStore(JsonlBackend(root, writable=False))
            try:
                want = {row.id: row for row in fresh.list()}
                got = {row.id: row for row in follower.list()}
                assert set(got) == set(want), round_no
                for sid, row in want.items():
                    mine = follower.get(sid)  # loaded now: the next round follows it live
                    assert [e.encode() for e in mine.events] == [
                        e.encode() for e in fresh.get(sid).events
                    ], (round_no, sid)
                    assert got[sid].events == row.events, (round_no, sid)
            finally:
                fresh.close()
        assert failures == []
        print(f"\nfollowing the disk through {FOLLOW_KILLS} kills: {kinds}")
        assert kinds.get("appended", 0) > 0  # it followed live logs, not only rows
    finally:
        watcher.stop()
        follower.close()
