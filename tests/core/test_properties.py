"""Property tests: boundaries, anchors, replay and truncation over random valid logs.

Every property compares the store against an oracle written here from the rules of
the log format and fork rules, not against the store's own helpers.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st
from logdata import Refused, events_of, outcome
from strategies import examples, logs

from forkwise.core.log.event_log import EventLog
from forkwise.core.log.events import Event
from forkwise.core.log.replay import MessageView, Replayer, replay
from forkwise.core.log.turns import message_boundary, resolve_anchor
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session import Session, SessionSummary
from forkwise.core.store.session_store import SessionStore


def open_after(events: Sequence[Event], b: int) -> bool:
    """Oracle: is a turn open after the first b events?"""
    depth = 0
    for e in events[:b]:
        if e.type == "turn/start":
            depth = 1
        elif e.type == "turn/end":
            depth = 0
    return depth == 1


def without_origin(views: Sequence[MessageView]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.to_dict().items() if k != "origin"} for m in views]


def source_store(drafts: list[dict[str, Any]]) -> tuple[SessionStore, list[Event]]:
    store = SessionStore(MemoryBackend())
    store.create("src", cwd="/src/cwd")
    store.append("src", drafts)
    return store, list(store.get("src").events)


@examples(150, 3000)
@given(logs())
def test_a_fork_succeeds_exactly_at_a_safe_boundary(drafts: list[dict[str, Any]]) -> None:
    store, events = source_store(drafts)
    n = len(events)
    before = store.get("src")
    for b in range(-2, n + 3):
        ids = store.ids()
        child_id = f"c{b + 2}"
        child = outcome(store.fork, "src", b, child_id)
        if not 0 <= b <= n:
            assert child == Refused("invalid-boundary")
        elif open_after(events, b):
            assert child == Refused("boundary-in-open-turn")
        else:
            assert isinstance(child, Session), (b, child)
        if isinstance(child, Refused):
            assert store.ids() == ids
            continue
        # the child: the same prefix, then one history/fork at b+1
        assert child.events[:b] == tuple(events[:b])
        assert [e.encode() for e in child.events[:b]] == [e.encode() for e in events[:b]]
        assert len(child.events) == b + 1
        fork = child.events[b]
        assert (fork.type, fork.seq, fork.get("source"), fork.get("boundary")) == (
            "history/fork",
            b + 1,
            "src",
            b,
        )
        assert (child.header.parent_session, child.header.seed_length, child.header.cwd) == (
            "src",
            b,
            "/src/cwd",
        )
        # it replays like the source prefix, its copied messages carrying their origin
        want, got = replay(events[:b]), child.replay()
        assert got.transcript == want.transcript
        assert without_origin(got.messages) == without_origin(want.messages)
        assert [m.origin for m in got.messages] == [
            {"session_id": "src", "message_id": m.id, "turn_id": m.turn} for m in want.messages
        ]
        assert got.open_turn is None
        # a summary from the store equals one folded from the child's own log
        assert store.summary(child_id) == SessionSummary.start(child.header).fold(child.events)
    after = store.get("src")
    assert after == before
    assert after.generation == before.generation
    # the default boundary is the last event, with the same rule
    child = outcome(store.fork, "src", child_id="default")
    if open_after(events, n):
        assert child == Refused("boundary-in-open-turn")
    else:
        assert child.header.seed_length == n


@examples(150, 3000)
@given(logs(), st.integers(-3, 80))
def test_truncate_keeps_exactly_a_safe_prefix(drafts: list[dict[str, Any]], b: int) -> None:
    store, events = source_store(drafts)
    n = len(events)
    out = outcome(store.truncate, "src", b)
    if not 0 <= b <= n:
        assert out == Refused("invalid-boundary")
    elif open_after(events, b):
        assert out == Refused("boundary-in-open-turn")
    if isinstance(out, Refused):
        assert list(store.get("src").events) == events
        return
    assert 0 <= b <= n
    assert not open_after(events, b)
    assert list(out.events) == events[:b]
    assert out.replay().transcript == replay(events[:b]).transcript
    nxt = store.append("src", [{"type": "plugin/after/truncate"}])
    assert nxt[0].seq == b + 1
    assert store.summary("src") == SessionSummary.start(out.header).fold([*events[:b], *nxt])


def first_turn_end_at_or_after(events: Sequence[Event], anchor: int) -> int | None:
    for e in events[anchor - 1 :]:
        if e.type == "turn/end":
            return e.seq
    return None


def last_turn_end(events: Sequence[Event]) -> int | None:
    ends = [e.seq for e in events if e.type == "turn/end"]
    return ends[-1] if ends else None


@examples(200, 5000)
@given(logs())
def test_an_anchor_resolves_to_the_first_turn_end_at_or_after_it(
    drafts: list[dict[str, Any]],
) -> None:
    events = events_of(drafts)
    n = len(events)
    for anchor in [None, *range(1, n + 3)]:
        if anchor is None or anchor > n:
            want = last_turn_end(events)
        else:
            want = first_turn_end_at_or_after(events, anchor)
        got = outcome(resolve_anchor, events, anchor, "src")
        if want is None:
            assert got == Refused("fork-unavailable"), anchor
            continue
        assert got == want
        if anchor is not None and anchor <= n:
            assert got >= anchor  # never an earlier turn
        assert events[got - 1].type == "turn/end"
        assert not open_after(events, got)
    for bad in (0, -1, True, 1.5, "3"):
        assert outcome(resolve_anchor, events, bad, "src") == Refused("invalid-boundary")


@examples(150, 3000)
@given(logs())
def test_a_message_boundary_is_its_turns_end_or_just_before_the_turn(
    drafts: list[dict[str, Any]],
) -> None:
    events = events_of(drafts)
    for m in (e for e in events if e.type == "message"):
        mid = m.get("id")
        end = first_turn_end_at_or_after(events, m.seq)
        got = outcome(message_boundary, events, mid, True, "src")
        assert got == (Refused("fork-unavailable") if end is None else end)
        if end is not None:
            assert events[end - 1].get("turn") == m.get("turn")  # its own turn
        earlier = [e for e in events[: m.seq - 1] if e.get("turn") == m.get("turn")]
        opens = all(e.type != "message" for e in earlier)
        got = outcome(message_boundary, events, mid, False, "src")
        if not opens:
            assert got == Refused("boundary-in-open-turn")
            continue
        assert events[got].type == "turn/start"
        assert events[got].get("turn") == m.get("turn")
        assert not open_after(events, got)
    unknown = outcome(message_boundary, events, "user:nobody:0000", True, "src")
    assert unknown == Refused("message-not-found")


@examples(40, 600)
@given(logs(max_blocks=5), st.data())
def test_jsonl_round_trip_and_fork_bytes(drafts: list[dict[str, Any]], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = SessionStore(JsonlBackend(root))
        store.create("src", cwd="/c")
        store.append("src", drafts)
        events = list(store.get("src").events)
        safe = [b for b in range(len(events) + 1) if not open_after(events, b)]
        b = data.draw(st.sampled_from(safe))
        store.fork("src", b, "child")
        store.close()
        src_lines = (root / "sessions" / "src.jsonl").read_bytes().splitlines()
        child_lines = (root / "sessions" / "child.jsonl").read_bytes().splitlines()
        assert child_lines[1 : b + 1] == src_lines[1 : b + 1]
        assert len(child_lines) == b + 2
        store = SessionStore(JsonlBackend(root))
        again = store.get("src")
        assert list(again.events) == events
        assert again.replay() == replay(events)
        child = store.get("child")
        assert child.replay().transcript == replay(events[:b]).transcript
        assert {s.id: s for s in store.list()}["child"] == SessionSummary.start(child.header).fold(
            child.events
        )
        store.close()


@examples(150, 2000)
@given(logs(), st.data())
def test_replay_of_undecoded_lines_equals_replay_of_events(
    drafts: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The fold over a lazily decoded log (lines decoded, or skipped undecoded, as it goes;
    types known or not; some events already decoded; fed in two pieces) replays exactly
    like the fold over the built events."""
    _, events = source_store(drafts)
    want = replay(tuple(events))
    lines = [e.encode() for e in events]
    types = [e.type for e in events]
    for log in (EventLog.lazy(lines), EventLog.lazy(lines, types)):
        for i in data.draw(st.lists(st.integers(0, max(0, len(events) - 1)), max_size=5)):
            if events:
                log[i]  # this one decoded (and cached) before the replay
        cut = data.draw(st.integers(0, len(events)))
        replayer = Replayer().catch_up(log.view(cut))
        assert replayer.last_seq == cut
        assert replayer.catch_up(log.view()).result() == want
        assert replay(log) == want


@examples(150, 2000)
@given(logs(), st.data())
def test_a_replay_restored_from_a_checkpoint_goes_on_like_one_that_folded_everything(
    drafts: list[dict[str, Any]], data: st.DataObject
) -> None:
    """A checkpoint taken between turns, through JSON and back, then fed the rest of the
    log, replays exactly like the fold of the whole log, a fork's origins included; none
    is taken while a turn is open."""
    _, events = source_store(drafts)
    lines = [e.encode() for e in events]
    seed = data.draw(st.integers(0, len(events)))
    want = replay(tuple(events), "parent", seed)
    cut = data.draw(st.integers(0, len(events)))
    log = EventLog.lazy(lines)
    state = Replayer("parent", seed).catch_up(log.view(cut)).checkpoint()
    if open_after(events, cut):
        assert state is None
        return
    assert state is not None
    restored = Replayer.restore(orjson.loads(orjson.dumps(state)), log)
    assert restored.last_seq == cut
    got = restored.catch_up(log.view()).result()
    assert got == want
    assert [m.origin for m in got.messages] == [m.origin for m in want.messages]
