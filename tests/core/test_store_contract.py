"""The store contract (fork at an exact boundary, truncate), one suite run against every backend."""

from __future__ import annotations

from typing import Any

import pytest
from logdata import SAMPLE, TS, events_of, message, turn
from store_harness import StoreHarness

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.digest import digest_lines
from forkwise.core.log.events import HISTORY_FORK
from forkwise.core.store.session import (
    EventsAppended,
    Session,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionTruncated,
)
from forkwise.core.store.session_store import SessionStore


def code_of(exc: pytest.ExceptionInfo[ForkwiseError]) -> str:
    return exc.value.code


def sample(store: SessionStore, sid: str = "src", cwd: str = "/work/project") -> Session:
    store.create(sid, cwd=cwd, meta={"title": "source"})
    store.append(sid, SAMPLE)
    return store.get(sid)


def seqs_of(session: Session) -> list[int]:
    return [e.seq for e in session.events]


def types_of(session: Session) -> list[str]:
    return [e.type for e in session.events]


class Recorder:
    def __init__(self, store: SessionStore) -> None:
        self.changes: list[Any] = []
        store.subscribe(self.changes.append)

    def kinds(self) -> list[str]:
        return [c.kind for c in self.changes]


def assert_nothing_written(h: StoreHarness, before: dict[str, Any], ids: list[str]) -> None:
    assert h.persisted() == before
    assert h.store.ids() == ids
    assert h.reopen().ids() == ids


# --- the source -------------------------------------------------------------------


def test_unknown_source_is_source_not_found(harness: StoreHarness) -> None:
    with pytest.raises(ForkwiseError) as exc:
        harness.store.fork("nobody")
    assert code_of(exc) == "source-not-found"


def test_deleted_source_by_id_is_source_not_found(harness: StoreHarness) -> None:
    sample(harness.store)
    harness.store.delete("src")
    with pytest.raises(ForkwiseError) as exc:
        harness.store.fork("src")
    assert code_of(exc) == "source-not-found"


@pytest.mark.parametrize("change", ["truncated", "deleted", "replaced", "replaced-after-reopen"])
def test_session_object_changed_since_obtained_is_stale(harness: StoreHarness, change: str) -> None:
    store = harness.store
    old = sample(store)
    if change == "truncated":
        store.truncate("src", 13)
    elif change == "deleted":
        store.delete("src")
    else:
        store.delete("src")
        if change == "replaced-after-reopen":
            store = harness.reopen()
        store.create("src")
        store.append("src", SAMPLE)
    before = harness.persisted()
    for op in (
        lambda: store.fork(old),
        lambda: store.fork(old, 0, "child"),
        lambda: store.truncate(old, 0),
        lambda: store.delete(old),
    ):
        with pytest.raises(ForkwiseError) as exc:
            op()
        assert code_of(exc) == "stale-session"
    assert harness.persisted() == before


def test_session_object_after_appends_is_not_stale(harness: StoreHarness) -> None:
    store = harness.store
    old = sample(store)
    store.append("src", [{"type": "plugin/x/y", "n": 1}])
    child = store.fork(old, 13, "c1")
    assert child.header.seed_length == 13
    # the default boundary is the source's current last event, as the store holds it now
    child2 = store.fork(old, child_id="c2")
    assert child2.header.seed_length == old.last_seq + 1


def test_session_object_survives_reopen(harness: StoreHarness) -> None:
    """A reopened store has no generation for an old object: it is stale, not silently
    taken as current (the store cannot know the file was not replaced meanwhile)."""
    old = sample(harness.store)
    store = harness.reopen()
    with pytest.raises(ForkwiseError) as exc:
        store.fork(old)
    assert code_of(exc) == "stale-session"
    assert store.fork(store.get("src")).header.seed_length == old.last_seq


# --- child ids ----------------------------------------------------------------------


@pytest.mark.parametrize("boundary", [None, 0, 7, -1, 999, True, "x"])
def test_taken_child_id_is_refused_before_the_boundary(
    harness: StoreHarness, boundary: Any
) -> None:
    sample(harness.store)
    harness.store.create("taken")
    before, ids = harness.persisted(), harness.store.ids()
    for child in ("taken", "src"):
        with pytest.raises(ForkwiseError) as exc:
            harness.store.fork("src", boundary, child)
        assert code_of(exc) == "duplicate-session-id"
    assert_nothing_written(harness, before, ids)


def test_generated_child_ids_are_valid_and_new(harness: StoreHarness) -> None:
    sample(harness.store)
    children = {harness.store.fork("src").id for _ in range(5)}
    assert len(children) == 5
    assert "src" not in children
    assert set(harness.store.ids()) == children | {"src"}


def test_create_refuses_a_taken_id(harness: StoreHarness) -> None:
    sample(harness.store)
    before = harness.persisted()
    with pytest.raises(ForkwiseError) as exc:
        harness.store.create("src")
    assert code_of(exc) == "duplicate-session-id"
    assert harness.persisted() == before


# --- boundaries ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "boundary", [-1, -100, 23, 24, 10**12, 1.0, 3.5, "3", b"3", True, False, [3]]
)
def test_invalid_boundary(harness: StoreHarness, boundary: Any) -> None:
    src = sample(harness.store)
    assert src.last_seq == 22
    before, ids = harness.persisted(), harness.store.ids()
    with pytest.raises(ForkwiseError) as exc:
        harness.store.fork("src", boundary, "child")
    assert code_of(exc) == "invalid-boundary"
    assert_nothing_written(harness, before, ids)


def test_boundary_equal_to_last_seq_is_valid(harness: StoreHarness) -> None:
    sample(harness.store)
    assert harness.store.fork("src", 22).header.seed_length == 22


def open_turn_log() -> list[dict[str, Any]]:
    """Standalone, one closed turn, standalone, then a full turn (every kind inside)."""
    return [
        {"type": "session/title", "title": "t"},  # 1
        *turn("t1"),  # 2..5
        {"type": "plugin/a/b"},  # 6
        *turn("t2", tool=True, approval=True),  # 7..16, turn/end at 16
        {"type": "model/select", "provider": "p", "model": "m"},  # 17
    ]


def test_every_boundary_inside_a_turn_is_refused(harness: StoreHarness) -> None:
    store = harness.store
    store.create("src")
    store.append("src", open_turn_log())
    src = store.get("src")
    kinds = {e.seq: e.type for e in src.events}
    assert kinds[7] == "turn/start"
    assert kinds[16] == "turn/end"
    inside = {2, 3, 4, *range(7, 16)}
    before, ids = harness.persisted(), store.ids()
    for b in range(18):
        if b in inside:
            with pytest.raises(ForkwiseError) as exc:
                store.fork("src", b, f"c{b}")
            assert code_of(exc) == "boundary-in-open-turn", (b, kinds.get(b))
    assert_nothing_written(harness, before, ids)
    for b in sorted(set(range(18)) - inside):
        child = harness.store.fork("src", b, f"c{b}")
        assert child.header.seed_length == b
    # the kinds covered: turn/start, step/start, messages, a tool call, its result,
    # approval request and resolve, step/end
    covered = {kinds[b] for b in inside}
    assert covered == {
        "turn/start",
        "message",
        "step/start",
        "approval/request",
        "approval/resolve",
        "tool/result",
        "step/end",
    }


def test_open_final_turn_refuses_the_default_boundary(harness: StoreHarness) -> None:
    store = harness.store
    store.create("src")
    store.append("src", [*turn("t1"), *turn("t2", open_=True)])
    before, ids = harness.persisted(), store.ids()
    with pytest.raises(ForkwiseError) as exc:
        store.fork("src")
    assert code_of(exc) == "boundary-in-open-turn"
    assert exc.value.details["turn_start"] == 5
    assert_nothing_written(harness, before, ids)
    # no silent clipping: the last completed turn is still forkable explicitly
    assert harness.store.fork("src", 4).header.seed_length == 4


def test_empty_source_gives_an_empty_child(harness: StoreHarness) -> None:
    harness.store.create("empty", cwd="/somewhere")
    child = harness.store.fork("empty", child_id="kid")
    assert child.header.seed_length == 0
    assert child.header.parent_session == "empty"
    assert types_of(child) == [HISTORY_FORK]
    assert child.events[0].seq == 1
    # the digest of the copied prefix: here, of no lines at all
    assert dict(child.events[0].fields) == {
        "source": "empty", "boundary": 0, "prefixDigest": digest_lines([])
    }
    assert harness.store.fork("empty", 0, "kid0").header.seed_length == 0
    with pytest.raises(ForkwiseError) as exc:
        harness.store.fork("empty", 1, "kid1")
    assert code_of(exc) == "invalid-boundary"


def test_omitted_boundary_is_the_last_event_even_a_standalone_one(harness: StoreHarness) -> None:
    src = sample(harness.store)
    harness.store.append("src", [{"type": "plugin/late/thing", "v": 1}])
    child = harness.store.fork("src")
    assert child.header.seed_length == src.last_seq + 1
    assert child.events[src.last_seq].type == "plugin/late/thing"


# --- the child ----------------------------------------------------------------------


@pytest.mark.parametrize("b", [0, 1, 2, 13, 17, 22])
def test_child_is_a_copy_of_the_prefix_then_one_history_fork(harness: StoreHarness, b: int) -> None:
    src = sample(harness.store, cwd="/work/elsewhere")
    child = harness.store.fork("src", b, "child")
    assert child.id == "child"
    assert child.header.cwd == "/work/elsewhere"
    assert child.header.parent_session == "src"
    assert child.header.seed_length == b
    assert seqs_of(child) == list(range(1, b + 2))
    assert [e.encode() for e in child.events[:b]] == [e.encode() for e in src.events[:b]]
    assert child.events[:b] == src.events[:b]
    fork = child.events[b]
    assert fork.type == HISTORY_FORK
    assert fork.seq == b + 1
    assert fork.get("source") == "src"
    assert fork.get("boundary") == b
    # what the child's own log says survives a reopen
    again = harness.reopen().get("child")
    assert again.header == child.header
    assert [e.encode() for e in again.events] == [e.encode() for e in child.events]


def test_history_fork_names_the_anchor_message_and_turn(harness: StoreHarness) -> None:
    sample(harness.store)
    src = harness.store.get("src")
    by_seq = {e.seq: e for e in src.events}
    t3_end = max(e.seq for e in src.events if e.type == "turn/end")
    fork = harness.store.fork("src", t3_end, "c").events[-1]
    assert fork.get("anchorTurn") == "t3"
    assert fork.get("anchorMessage") == "assistant:t3:a"
    # at a standalone event after t1: the anchor is t1 and its last message
    fork = harness.store.fork("src", 13, "c2").events[-1]
    assert by_seq[13].type == "plugin/notes/pin"
    assert (fork.get("anchorTurn"), fork.get("anchorMessage")) == ("t1", "assistant:t1:a")
    # before any turn: nothing to anchor to
    fork = harness.store.fork("src", 2, "c3").events[-1]
    assert "anchorTurn" not in fork.fields
    assert "anchorMessage" not in fork.fields


def test_anchor_message_belongs_to_the_anchor_turn(harness: StoreHarness) -> None:
    """A turn without messages (cancelled before the model answered) must not borrow the
    previous turn's message as its anchor."""
    store = harness.store
    store.create("src")
    store.append(
        "src",
        [
            *turn("t1"),
            {"type": "turn/start", "turn": "t2"},
            {"type": "turn/end", "turn": "t2", "status": "cancelled"},
        ],
    )
    fork = store.fork("src", child_id="c").events[-1]
    assert fork.get("anchorTurn") == "t2"
    assert fork.get("anchorMessage") is None


def test_source_is_unchanged_and_records_nothing(harness: StoreHarness) -> None:
    src = sample(harness.store)
    harness.store.fork("src", 22, "other")  # a second session on disk, for comparison
    before = harness.persisted()
    if harness.kind == "jsonl":
        src_bytes = harness.session_bytes("src")
    for b in (0, 13, 22):
        harness.store.fork("src", b, f"c{b}")
    after = harness.persisted()
    assert {k: v for k, v in after.items() if k in before} == before
    assert harness.store.get("src") == src
    assert harness.store.events_since("src", 0) == src.events
    if harness.kind == "jsonl":
        assert harness.session_bytes("src") == src_bytes
    again = harness.reopen().get("src")
    assert [e.encode() for e in again.events] == [e.encode() for e in src.events]
    assert again.header == src.header


def test_copied_messages_carry_their_origin(harness: StoreHarness) -> None:
    src = sample(harness.store)
    harness.store.fork("src", 13, "child")
    harness.store.append("child", turn("c1", "new question", "new answer"))
    for store in (harness.store, harness.reopen()):
        views = store.get("child").replay().messages
        copied = [m for m in views if m.seq <= 13]
        assert [m.id for m in copied] == [m.id for m in src.replay().messages if m.seq <= 13]
        for m in copied:
            assert m.origin == {"session_id": "src", "message_id": m.id, "turn_id": m.turn}
        own = [m for m in views if m.seq > 13]
        assert [m.id for m in own] == ["user:c1:q", "assistant:c1:a"]
        assert all(m.origin is None for m in own)
    # the source's own messages have no origin
    assert all(m.origin is None for m in harness.store.get("src").replay().messages)


def test_child_replays_like_the_source_prefix(harness: StoreHarness) -> None:
    src = sample(harness.store)
    from forkwise.core.log.replay import replay

    for b in (0, 2, 13, 18):
        child = harness.store.fork("src", b, f"c{b}")
        want = replay(src.events[:b])
        got = child.replay()
        assert got.transcript == want.transcript
        assert [m.to_dict() | {"origin": None} for m in got.messages] == [
            m.to_dict() | {"origin": None} for m in want.messages
        ]
        assert got.forked_from is not None
        assert got.forked_from["boundary"] == b


def test_a_fork_is_independent_of_its_source(harness: StoreHarness) -> None:
    sample(harness.store)
    child = harness.store.fork("src", 13, "child")
    harness.store.append("src", turn("s4"))
    harness.store.append("child", turn("c4"))
    assert harness.store.get("child").events[:14] == child.events
    assert "user:s4:q" not in [m.id for m in harness.store.get("child").replay().messages]
    assert "user:c4:q" not in [m.id for m in harness.store.get("src").replay().messages]


def test_fork_of_a_fork(harness: StoreHarness) -> None:
    sample(harness.store)
    harness.store.fork("src", 13, "child")
    harness.store.append("child", turn("c1"))
    grand = harness.store.fork("child", child_id="grand")
    assert grand.header.parent_session == "child"
    assert grand.header.seed_length == 18
    assert [e.type for e in grand.events].count(HISTORY_FORK) == 2
    assert grand.events[-1].get("source") == "child"


# --- failures write nothing -----------------------------------------------------------


def test_failed_forks_write_nothing_and_announce_nothing(harness: StoreHarness) -> None:
    store = harness.store
    sample(store)
    store.append("src", turn("t9", open_=True))
    store.create("taken")
    stale = store.get("src")
    store.truncate("src", 22)
    rec = Recorder(store)
    before, ids = harness.persisted(), store.ids()
    attempts = [
        (lambda: store.fork("nobody"), "source-not-found"),
        (lambda: store.fork(stale), "stale-session"),
        (lambda: store.fork("src", 3, "taken"), "duplicate-session-id"),
        (lambda: store.fork("src", 99, "c"), "invalid-boundary"),
        (lambda: store.fork("src", 3, "c"), "boundary-in-open-turn"),
        (lambda: store.fork("src", 3, "../c"), "invalid-session-id"),
        (lambda: store.fork("src", 22, "c", follow=[{"type": "message"}]), "invalid-event"),
    ]
    for attempt, code in attempts:
        with pytest.raises(ForkwiseError) as exc:
            attempt()
        assert code_of(exc) == code
    assert rec.changes == []
    assert_nothing_written(harness, before, ids)


# --- appends --------------------------------------------------------------------------


def test_append_numbers_events_and_refuses_bracket_errors(harness: StoreHarness) -> None:
    store = harness.store
    store.create("s")
    events = store.append("s", turn("t1"))
    assert [e.seq for e in events] == [1, 2, 3, 4]
    before = harness.persisted()
    bad = [
        [{"type": "message", **message("t1", "user", "user:x:1", "hi")}],  # outside a turn
        [{"type": "turn/end", "turn": "t9", "status": "completed"}],
        [{"type": "turn/start", "turn": "t2"}, {"type": "turn/start", "turn": "t3"}],
        [{"type": "turn/start", "turn": "t2"}, message("t2", "robot", "r:x:1", "hi")],
        [{"type": "turn/start", "turn": "t2"}, message("t2", "user", "user:t1:q", "dup id")],
        [{"type": "turn/start", "turn": "t2"}, {"type": "step/start", "turn": "t1", "step": "s"}],
        [{"type": ""}],
        [{"type": "plugin/x/y", "bad": {1, 2}}],
    ]
    for drafts in bad:
        with pytest.raises(ForkwiseError) as exc:
            store.append("s", drafts)
        assert code_of(exc) == "invalid-event", drafts
    assert harness.persisted() == before
    # the failed batches left no trace in the bracket state either
    assert [e.seq for e in store.append("s", turn("t2"))] == [5, 6, 7, 8]


def test_appends_survive_a_reopen(harness: StoreHarness) -> None:
    src = sample(harness.store)
    again = harness.reopen().get("src")
    assert again.header == src.header
    assert [e.encode() for e in again.events] == [e.encode() for e in src.events]
    assert again.replay() == src.replay()


# --- truncate (replace in place, store level) --------------------------------


def test_truncate_keeps_the_prefix_and_the_identity(harness: StoreHarness) -> None:
    store = harness.store
    src = sample(store)
    rec = Recorder(store)
    out = store.truncate(src, 13)
    assert out.id == "src"
    assert out.header == src.header
    assert out.events == src.events[:13]
    assert out.generation != src.generation
    assert HISTORY_FORK not in types_of(out)
    assert rec.kinds() == ["session/truncate"]
    assert isinstance(rec.changes[0], SessionTruncated)
    assert rec.changes[0].through == 13
    assert store.ids() == ["src"]  # no branch, no archive session
    # surviving message identities are unchanged
    assert [m.to_dict() for m in out.replay().messages] == [
        m.to_dict() for m in src.replay().messages if m.seq <= 13
    ]
    # the next event continues at 14, and a reopened store agrees
    assert store.append("src", turn("t9"))[0].seq == 14
    again = harness.reopen().get("src")
    assert [e.seq for e in again.events] == list(range(1, 18))
    assert again.events[:13] == src.events[:13]


def test_truncate_deletes_later_context_summaries(harness: StoreHarness) -> None:
    store = harness.store
    src = sample(store)
    summary_seq = next(e.seq for e in src.events if e.type == "context/summary")
    out = store.truncate("src", summary_seq - 1)
    assert "context/summary" not in types_of(out)
    assert {"role": "system", "content": "they read files"} not in out.replay().transcript


def test_truncate_at_the_last_event_changes_nothing(harness: StoreHarness) -> None:
    src = sample(harness.store)
    rec = Recorder(harness.store)
    before = harness.persisted()
    assert harness.store.truncate(src, 22) == src
    assert rec.changes == []
    assert harness.persisted() == before
    assert harness.store.fork(src, 0, "c").header.seed_length == 0  # still current


@pytest.mark.parametrize(
    ("through", "code"),
    [
        (3, "boundary-in-open-turn"),
        (11, "boundary-in-open-turn"),
        (-1, "invalid-boundary"),
        (23, "invalid-boundary"),
        (True, "invalid-boundary"),
        (2.0, "invalid-boundary"),
    ],
)
def test_truncate_refuses_bad_boundaries(harness: StoreHarness, through: Any, code: str) -> None:
    sample(harness.store)
    before = harness.persisted()
    with pytest.raises(ForkwiseError) as exc:
        harness.store.truncate("src", through)
    assert code_of(exc) == code
    assert harness.persisted() == before


def test_truncate_inside_the_seed_shrinks_seed_length(harness: StoreHarness) -> None:
    sample(harness.store)
    harness.store.fork("src", 17, "child")
    out = harness.store.truncate("child", 13)
    assert out.header.seed_length == 13
    assert out.header.parent_session == "src"
    assert all(m.origin is not None for m in out.replay().messages)
    again = harness.reopen().get("child")
    assert again.header.seed_length == 13
    assert again.events == out.events
    # cutting the history/fork event away leaves a plain prefix
    assert HISTORY_FORK not in types_of(again)


def test_truncate_after_the_seed_keeps_seed_length(harness: StoreHarness) -> None:
    sample(harness.store)
    harness.store.fork("src", 13, "child")
    harness.store.append("child", turn("c1"))
    out = harness.store.truncate("child", 14)
    assert out.header.seed_length == 13
    assert types_of(out)[-1] == HISTORY_FORK


# --- delete -----------------------------------------------------------------------


def test_delete(harness: StoreHarness) -> None:
    store = harness.store
    sample(store)
    store.fork("src", 13, "child")
    rec = Recorder(store)
    store.delete("src")
    assert rec.kinds() == ["session/disposed"]
    assert rec.changes[0].session_id == "src"
    assert store.ids() == ["child"]
    assert [s.id for s in store.list()] == ["child"]
    assert not store.exists("src")
    with pytest.raises(ForkwiseError) as exc:
        store.get("src")
    assert code_of(exc) == "source-not-found"
    with pytest.raises(ForkwiseError) as exc:
        store.delete("src")
    assert code_of(exc) == "source-not-found"
    # the child stays readable on its own (its log does not depend on the source)
    store = harness.reopen()
    assert store.ids() == ["child"]
    assert store.get("child").header.parent_session == "src"
    # the id may be used again
    assert store.create("src").last_seq == 0


# --- store change events --------------------------------------------------------------


def test_create_announces_the_seed_once(harness: StoreHarness) -> None:
    rec = Recorder(harness.store)
    seed = events_of(turn("t1"))
    s = harness.store.create("seeded", seed=seed, cwd="/x")
    assert rec.kinds() == ["session/created"]
    created = rec.changes[0]
    assert isinstance(created, SessionCreated)
    assert created.header == s.header
    assert created.seed == tuple(seed)
    assert created.events == ()
    assert s.header.seed_length == 4


def test_fork_announces_created_with_the_seed_and_the_history_fork(harness: StoreHarness) -> None:
    src = sample(harness.store)
    rec = Recorder(harness.store)
    child = harness.store.fork("src", 13, "child")
    assert rec.kinds() == ["session/created"]
    created = rec.changes[0]
    assert created.seed == src.events[:13]
    assert [e.type for e in created.events] == [HISTORY_FORK]
    assert created.header == child.header
    if harness.kind == "jsonl":  # the seed is persisted exactly once
        lines = harness.session_bytes("child").splitlines()
        assert len(lines) == 1 + 13 + 1
        assert lines[1:14] == [e.encode() for e in src.events[:13]]


def test_append_announces_the_events_then_a_flush(harness: StoreHarness) -> None:
    harness.store.create("s")
    rec = Recorder(harness.store)
    events = harness.store.append("s", turn("t1"))
    assert rec.kinds() == ["session/event", "session/flush"]
    appended, flushed = rec.changes
    assert isinstance(appended, EventsAppended)
    assert appended.events == events
    assert isinstance(flushed, SessionFlushed)
    assert flushed.session_id == "s"
    assert harness.store.append("s", []) == ()
    assert rec.kinds() == ["session/event", "session/flush"]


def test_delete_announces_disposed(harness: StoreHarness) -> None:
    harness.store.create("s")
    rec = Recorder(harness.store)
    harness.store.delete("s")
    assert [type(c) for c in rec.changes] == [SessionDisposed]


def test_a_broken_subscriber_does_not_break_the_store(
    harness: StoreHarness, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(change: object) -> None:
        raise RuntimeError("subscriber bug")

    harness.store.subscribe(broken)
    with caplog.at_level("ERROR"):
        harness.store.create("s")
        harness.store.append("s", turn("t1"))
    assert harness.store.get("s").last_seq == 4
    assert "store subscriber failed" in caplog.text


def test_unsubscribe(harness: StoreHarness) -> None:
    seen: list[object] = []
    stop = harness.store.subscribe(seen.append)
    harness.store.create("a")
    stop()
    harness.store.create("b")
    assert len(seen) == 1


# --- session ids -----------------------------------------------------------------------

BAD_IDS = [
    "",
    ".hidden",
    "..",
    "../x",
    "a/b",
    "a\\b",
    "/abs",
    "x" * 65,
    "a\x00b",
    "é",
    " a",
    "a b",
    "a\n",
    5,
    None,
    b"abc",
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_invalid_session_ids_are_refused(harness: StoreHarness, bad: Any) -> None:
    store = harness.store
    sample(store)
    before, ids = harness.persisted(), store.ids()
    attempts = [
        lambda: store.get(bad),
        lambda: store.fork(bad),
        lambda: store.append(bad, turn("t1")),
        lambda: store.truncate(bad, 0),
        lambda: store.delete(bad),
    ]
    if bad is not None:
        attempts += [lambda: store.create(bad), lambda: store.fork("src", 22, bad)]
    for attempt in attempts:
        with pytest.raises(ForkwiseError) as exc:
            attempt()
        assert code_of(exc) == "invalid-session-id"
    assert_nothing_written(harness, before, ids)


@pytest.mark.parametrize("good", ["a", "A-b_c.d", "x" * 64, "0", "-", "_x", "a.", "a..b"])
def test_valid_session_ids_are_accepted(harness: StoreHarness, good: str) -> None:
    harness.store.create(good)
    assert harness.reopen().get(good).id == good


# --- summaries -----------------------------------------------------------------------------


def test_list_summarizes_every_session(harness: StoreHarness) -> None:
    sample(harness.store)
    harness.store.fork("src", 13, "child")
    harness.store.append("child", turn("c1", open_=True))
    for store in (harness.store, harness.reopen()):
        rows = {s.id: s for s in store.list()}
        assert set(rows) == {"src", "child"}
        src, child = rows["src"], rows["child"]
        assert (src.events, src.turns, src.messages, src.running) == (22, 3, 7, False)
        assert (src.title, src.model, src.parent_session) == ("sample", "echo-1", None)
        assert (child.events, child.turns, child.running) == (14 + 3, 2, True)
        assert (child.parent_session, child.seed_length, child.relation) == ("src", 13, "fork")
        assert child.error is None


def test_created_timestamps_and_header_meta(harness: StoreHarness) -> None:
    s = harness.store.create("m", meta={"title": "from meta", "k": [1]}, cwd="/c")
    assert s.header.meta == {"title": "from meta", "k": [1]}
    assert s.header.created.endswith("Z")
    assert s.header.created != TS
    got = harness.reopen().get("m")
    assert dict(got.header.meta) == {"title": "from meta", "k": [1]}
    assert harness.store.summary("m").title == "from meta"


def test_summaries_agree_with_the_logs_before_and_after_reopen(harness: StoreHarness) -> None:
    """The summary a store keeps while it runs is the one a fresh read of the log gives."""
    from forkwise.core.store.session import SessionSummary

    store = harness.store
    store.create("src", meta={"title": "Source title"})
    store.append("src", turn("t1"))
    store.fork("src", child_id="whole")  # a fork of the whole log
    store.fork("src", 0, "empty")
    store.append("whole", turn("w1"))
    store.truncate("src", 0)
    # a logged title that happens to equal the header's: the child keeps it
    store.create("same", meta={"title": "Same"})
    store.append("same", [{"type": "session/title", "title": "Same"}, *turn("s1")])
    store.fork("same", child_id="same-kid")
    store.create("logged")
    store.append("logged", [{"type": "session/title", "title": "Logged"}, *turn("l1")])
    store.fork("logged", child_id="logged-kid")
    live = {s.id: s for s in store.list()}
    for sid, row in live.items():
        snap = store.get(sid)
        assert row == SessionSummary.start(snap.header).fold(snap.events), sid
    assert live["whole"].title is None  # the title was the source's header meta, not logged
    assert live["same-kid"].title == "Same"
    assert live["logged-kid"].title == "Logged"
    reopened = {s.id: s for s in harness.reopen().list()}
    assert reopened == live
