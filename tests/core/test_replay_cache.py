"""Replay checkpoints on disk: used while the log starts with what they cover, passed over
otherwise, made only by writers, for long logs."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from logdata import turn

from forkwise.core.log.replay import replay
from forkwise.core.store import replay_cache
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.replay_cache import ReplayCache
from forkwise.core.store.session_store import SessionStore
from forkwise.core.store.writer_lock import WriterLock


def long_store(root: Path, turns: int = 30) -> SessionStore:
    store = SessionStore(JsonlBackend(root))
    store.create("long", cwd="/w")
    for t in range(turns):
        store.append("long", turn(f"T{t}", question=f"question {t}", tool=t % 3 == 0))
    return store


def replay_of_checkpoint(root: Path) -> list[int]:
    """The seqs of the messages the checkpoint in `root` covers."""
    doc = orjson.loads((root / "replay" / "long.json").read_bytes().split(b"\n")[0])
    return list(range(doc["events"]))


def writer(root: Path) -> ReplayCache:
    return ReplayCache(root / "replay", writable=True, min_events=50, refresh_events=20)


def test_a_writer_checkpoints_a_long_log_and_a_reader_goes_on_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_cache, "CHUNK", 7)  # the transcript over many lines
    store = long_store(tmp_path)
    snap = store.get("long")
    want = replay(snap.events)
    assert writer(tmp_path).replayer(snap).result() == want
    lines = (tmp_path / "replay" / "long.json").read_bytes().splitlines()
    assert len(lines) == 1 + -(-len(want.transcript) // 7)
    reader = ReplayCache(tmp_path / "replay", writable=False)
    assert reader._load(snap) is not None  # the checkpoint is taken, not the log folded
    assert reader.replayer(snap).result() == want
    # the log grew: the checkpoint still covers its start, the rest is folded on top
    store.append("long", turn("more", question="one more"))
    grown = store.get("long")
    restored = reader._load(grown)
    assert restored is not None
    assert restored.last_seq == len(snap.events)
    assert reader.replayer(grown).result() == replay(grown.events)


def test_a_reader_and_a_short_log_make_no_checkpoint(tmp_path: Path) -> None:
    store = long_store(tmp_path)
    snap = store.get("long")
    ReplayCache(tmp_path / "replay", writable=False).replayer(snap)
    short = ReplayCache(tmp_path / "replay", writable=True, min_events=len(snap.events) + 1)
    short.replayer(snap)
    assert not (tmp_path / "replay").exists()


def test_a_checkpoint_of_a_rewritten_log_is_passed_over(tmp_path: Path) -> None:
    store = long_store(tmp_path)
    writer(tmp_path).replayer(store.get("long"))
    first_turn = len(turn("T0", tool=True))
    store.truncate("long", first_turn)  # replace in place below what the checkpoint covers
    for t in range(40):  # longer than before: only the digest tells it from growth
        store.append("long", turn(f"new{t}", question=f"a different question {t}"))
    snap = store.get("long")
    assert len(snap.events) > len(replay_of_checkpoint(tmp_path))
    cache = ReplayCache(tmp_path / "replay", writable=False)
    assert cache._load(snap) is None
    assert cache.replayer(snap).result() == replay(snap.events)


def test_a_damaged_or_foreign_checkpoint_is_passed_over(tmp_path: Path) -> None:
    store = long_store(tmp_path)
    store.create("other", cwd="/w")
    for t in range(30):
        store.append("other", turn(f"T{t}", question=f"question {t}", tool=t % 3 == 0))
    writer(tmp_path).replayer(store.get("other"))
    folder = tmp_path / "replay"
    snap = store.get("long")
    cache = ReplayCache(folder, writable=False)
    # another session's checkpoint under this session's name (same events, other id)
    (folder / "other.json").rename(folder / "long.json")
    assert cache._load(snap) is None
    whole = (folder / "long.json").read_bytes()
    short = whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 1]  # its last line lost
    for damaged in (b"", b"\x00" * 64, b'{"version": 1, "state": []}', b"[1, 2", short):
        (folder / "long.json").write_bytes(damaged)
        assert cache._load(snap) is None
        assert cache.replayer(snap).result() == replay(snap.events)


def test_a_deleted_session_loses_its_checkpoint(tmp_path: Path) -> None:
    store = long_store(tmp_path)
    cache = writer(tmp_path)
    cache.replayer(store.get("long"))
    cache.forget("long")
    assert not (tmp_path / "replay" / "long.json").exists()


def test_message_ids_a_replay_hands_the_store_keep_the_duplicate_id_rule(tmp_path: Path) -> None:
    """A log opened from the index gathers its message ids on its first write; a replay
    of the same log can hand them over instead, and a duplicate id is refused either way.
    Ids of another state of the log (it grew since) are not taken."""
    from logdata import Refused, message, outcome

    long_store(tmp_path).close()
    store = SessionStore(JsonlBackend(tmp_path))  # reopened: the log comes from the index
    snap = store.get("long")
    replayer = writer(tmp_path).replayer(snap)
    taken = next(iter(replayer.message_ids))
    store.adopt_message_ids(snap, replayer.message_ids)
    duplicate = [{"type": "turn/start", "turn": "D"}, message("D", "user", taken, "again")]
    assert outcome(store.append, "long", duplicate) == Refused("invalid-event")
    store.append("long", turn("new", question="a new one"))
    store.close()
    # ids of an older state of the log are not taken: they are gathered from the log
    again = SessionStore(JsonlBackend(tmp_path))
    grown = again.get("long")
    again.adopt_message_ids(snap, set())  # `snap` is of the log before it grew
    newest = replay(grown.events).messages[-1].id
    duplicate = [{"type": "turn/start", "turn": "E"}, message("E", "user", newest, "again")]
    assert outcome(again.append, "long", duplicate) == Refused("invalid-event")
    again.close()


def test_a_reader_given_the_lock_checkpoints_only_while_it_is_free(tmp_path: Path) -> None:
    store = long_store(tmp_path)
    snap = store.get("long")
    store.close()  # lets go of the writer lock
    lock = tmp_path / "writer.lock"
    reader = ReplayCache(
        tmp_path / "replay", writable=False, lock=lock, min_events=50, refresh_events=20
    )
    held = WriterLock(lock)
    assert held.acquire()  # a writer holds it: the reader writes nothing
    reader.replayer(snap)
    assert not (tmp_path / "replay" / "long.json").exists()
    held.release()
    assert reader.replayer(snap).result() == replay(snap.events)
    assert reader._load(snap) is not None  # written while the lock was free
    again = WriterLock(lock)
    assert again.acquire()  # let go of after the write
    again.release()
