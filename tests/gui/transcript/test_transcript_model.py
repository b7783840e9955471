"""The transcript model: lazy pages, live appends, streaming and replace in place, each
checked with qtmodeltester and against a transcript built from scratch."""

from __future__ import annotations

from typing import Any

import pytest

from forkwise.core.reading.entries import build
from forkwise.gui.domain.message_actions import (
    BUSY,
    EDIT_REPLACE,
    EDIT_RESEND,
    FORK_BEFORE,
    FORK_FROM,
    MID_TURN,
    NOT_A_MESSAGE,
    NOT_AN_ANSWER,
    RETRY,
    RUNNING,
    WAITING,
    message_actions,
)
from forkwise.gui.models.transcript_model import TranscriptModel

pytestmark = pytest.mark.gui


def turn(events: list[dict[str, Any]], n: int, *, close: bool = True, approval: bool = False) -> None:
    def add(**e: Any) -> None:
        events.append({"seq": len(events) + 1, "ts": "2025-01-01T00:00:00.000Z", **e})

    t = f"turn:{n}"
    add(type="turn/start", turn=t)
    add(type="message", id=f"user:q{n}:0", role="user", turn=t, parts=[{"type": "text", "text": f"question {n}"}])
    parts = [{"type": "reasoning", "text": "thinking"}, {"type": "text", "text": f"answer {n}"}]
    if approval:
        parts.append({"type": "tool_call", "id": f"call{n}", "name": "list_dir", "args": {}})
    add(type="message", id=f"assistant:a{n}:0", role="assistant", turn=t, parts=parts)
    if approval:
        add(type="approval/request", turn=t, approval=f"ap{n}", call=f"call{n}", tool="list_dir", args={})
        if close:
            add(type="approval/resolve", turn=t, approval=f"ap{n}", decision="approved")
            add(type="tool/result", turn=t, call=f"call{n}", tool="list_dir", output=["a"])
    if close:
        add(type="turn/end", turn=t, status="completed")


def log(turns: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"seq": 1, "ts": "", "type": "model/select", "provider": "offline", "model": "m"}]
    for n in range(turns):
        turn(events, n, approval=n % 3 == 1)
    return events


def shown(model: TranscriptModel) -> list[tuple[str, str, int]]:
    return [(e.kind, e.text, e.seq) for e in (model.entry(r) for r in range(model.rowCount())) if e]


def expected(events: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(e.kind, e.text, e.seq) for e in build(events).entries]


def test_pages_on_demand_and_matches_a_fresh_build(qtmodeltester: Any) -> None:
    events = log(40)
    model = TranscriptModel(page_size=50)
    asked: list[tuple[str, int, int]] = []
    model.pageRequested.connect(lambda sid, after, limit: asked.append((sid, after, limit)))
    qtmodeltester.check(model)
    model.open("s", {"events": len(events)})
    while not model.at_end:
        if not model.fetching:  # (the model tester may have asked already)
            model.fetchMore()
        sid, after, limit = asked[-1]
        assert not model.canFetchMore()  # one page at a time
        model.add_page(sid, after, events[after:after + limit])
        assert shown(model) == expected(events[:after + limit])
    assert [a for _s, a, _l in asked] == list(range(0, len(events) + 1, 50))[: len(asked)]
    assert shown(model) == expected(events)
    qtmodeltester.check(model)


def test_stale_page_is_ignored() -> None:
    events = log(3)
    model = TranscriptModel(page_size=100)
    model.open("s")
    model.fetchMore()
    model.open("other")
    model.add_page("s", 0, events)
    assert model.rowCount() == 0


def test_live_events_stream_and_truncate(qtmodeltester: Any) -> None:
    events = log(2)
    model = TranscriptModel(page_size=100)
    qtmodeltester.check(model)
    model.open("s")
    model.fetchMore()
    model.add_page("s", 0, events)
    live: list[dict[str, Any]] = list(events)
    turn(live, 9, close=False)
    start = live[len(events):]
    model.append_events("s", start[:2])  # turn/start + the user message
    assert model.running
    model.delta("s", "turn:9", "ans")
    model.delta("s", "turn:9", "wer")
    assert model.stream is not None
    assert model.stream.text == "answer"
    assert model.entry(model.rowCount() - 1).kind == "stream"
    model.append_events("s", start[2:])  # the whole assistant message: the stream row goes
    assert model.stream is None
    assert shown(model) == expected(live)
    model.append_events("s", live[:3])  # duplicates of what is shown are ignored
    assert shown(model) == expected(live)
    before = model.rowCount()
    model.truncate("s", len(events) - 4)  # replace in place: never shown as an entry
    assert model.rowCount() < before
    assert shown(model) == expected(live[: len(events) - 4])
    assert all(kind != "truncate" for kind, _t, _s in shown(model))
    qtmodeltester.check(model)


def test_gap_in_live_events_waits_for_paging() -> None:
    events = log(2)
    model = TranscriptModel(page_size=100)
    model.open("s")
    model.fetchMore()
    model.add_page("s", 0, events[:5])
    model.append_events("s", events[7:])
    assert shown(model) == expected(events[:5])
    assert model.canFetchMore()


def state(actions: list[Any], name: str) -> Any:
    return next(a for a in actions if a.name == name)


def answer_actions(b: Any) -> list[Any]:
    first_answer = next(e for e in b.entries if e.kind == "assistant")
    return message_actions(first_answer, b)


def test_action_rules() -> None:
    events = log(2)
    turn(events, 5, close=False, approval=True)
    b = build(events)
    by_id = {e.message_id: e for e in b.entries if e.kind in ("user", "assistant")}
    first_user = message_actions(by_id["user:q0:0"], b)
    assert state(first_user, FORK_FROM).enabled
    assert state(first_user, FORK_BEFORE).enabled
    assert state(first_user, EDIT_RESEND).enabled  # it branches: another open turn is fine
    assert not state(first_user, EDIT_REPLACE).enabled  # another turn is open (waiting)
    assert state(first_user, EDIT_REPLACE).reason == WAITING
    assert state(answer_actions(b), RETRY).enabled  # the answer of a completed turn
    assert state(first_user, RETRY).reason == NOT_AN_ANSWER
    answer = message_actions(by_id["assistant:a0:0"], b)
    assert state(answer, FORK_BEFORE).reason == MID_TURN
    waiting = message_actions(by_id["user:q5:0"], b)
    assert state(waiting, FORK_FROM).reason == WAITING
    assert not state(waiting, FORK_FROM).enabled
    events = log(1)
    turn(events, 7, close=False)
    b = build(events)
    running = message_actions(b.entries[-1], b)
    assert state(running, FORK_FROM).reason == RUNNING
    user = next(e for e in b.entries if e.message_id == "user:q0:0" and e.kind == "user")
    assert state(message_actions(user, b), EDIT_REPLACE).reason == BUSY
    assert state(message_actions(user, b), EDIT_RESEND).enabled
    # not all of the log loaded yet: the host decides
    assert state(message_actions(b.entries[-1], b, complete=False), FORK_FROM).enabled
    assert state(message_actions(None, b), FORK_FROM).reason == NOT_A_MESSAGE


def from_turn_start(events: list[dict[str, Any]], after: int) -> int:
    """The seq before the first turn that starts after `after` (what a page from there shows
    first: whole turns only)."""
    for e in events[after:]:
        if e["type"] == "turn/start":
            return int(e["seq"]) - 1
    return after


def test_opened_from_its_end_it_shows_whole_turns_and_earlier_ones_above(
        qtmodeltester: Any) -> None:
    events = log(40)  # 40 turns, some with approvals: turn sizes differ
    model = TranscriptModel(page_size=50)
    asked: list[tuple[str, int, int]] = []
    model.pageRequested.connect(lambda sid, after, limit: asked.append((sid, after, limit)))
    earlier: list[bool] = []
    model.earlierChanged.connect(earlier.append)
    qtmodeltester.check(model)
    model.open("s", {"events": len(events)}, from_end=True)
    model.fetchMore()
    assert asked[-1] == ("s", len(events) - 50, 51)  # the last page first (and one more)
    model.add_page("s", len(events) - 50, events[-50:])
    base = from_turn_start(events, len(events) - 50)
    assert model.at_end
    assert model.base == base > 0
    assert earlier == [True]
    assert shown(model) == expected(events)[-len(shown(model)):]  # its last whole turns
    assert shown(model)[0][0] == "user"  # from a turn's start, not its middle
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    while model.base:
        before = model.rowCount()
        model.fetch_earlier()
        sid, after, limit = asked[-1]
        assert (after, after + limit) == (max(0, model.base - 50), model.base)
        assert not model.can_fetch_earlier()  # one page at a time
        model.add_page(sid, after, events[after:after + limit])
        added = model.rowCount() - before
        assert inserted[-1] == (0, added - 1)  # rows above; the ones below stay
        assert shown(model) == expected(events)[-model.rowCount():]
    assert earlier == [True, False]
    assert shown(model) == expected(events)
    qtmodeltester.check(model)


def test_a_short_session_opened_from_its_end_is_read_from_its_start() -> None:
    events = log(3)
    model = TranscriptModel(page_size=100)
    asked: list[tuple[str, int, int]] = []
    model.pageRequested.connect(lambda sid, after, limit: asked.append((sid, after, limit)))
    model.open("s", {"events": len(events)}, from_end=True)
    model.fetchMore()
    assert asked == [("s", 0, model.first_page)]
    model.add_page("s", 0, events)
    assert model.base == 0
    assert shown(model) == expected(events)


def test_a_turn_longer_than_a_page_is_shown_whole_once_its_start_arrives(
        qtmodeltester: Any) -> None:
    events = log(2)  # its last turn has a tool call and an approval: longer than a page
    model = TranscriptModel(page_size=4)
    asked: list[tuple[str, int, int]] = []
    model.pageRequested.connect(lambda sid, after, limit: asked.append((sid, after, limit)))
    qtmodeltester.check(model)
    model.open("s", {"events": len(events)}, from_end=True)
    model.fetchMore()
    sid, after, limit = asked[-1]
    model.add_page(sid, after, events[after:after + limit])
    assert model.base == len(events) - 4  # no turn starts in the last page: from its middle
    while model.base:
        model.fetch_earlier()
        sid, after, limit = asked[-1]
        model.add_page(sid, after, events[after:after + limit])
        if model.events[0]["type"] == "turn/start":
            assert shown(model) == expected(events)[-model.rowCount():]
    assert shown(model) == expected(events)
    qtmodeltester.check(model)
