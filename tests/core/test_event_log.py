"""EventLog and EventView: events decoded on first access, views that never change."""

from __future__ import annotations

import orjson
import pytest
from logdata import events_of, turn

from forkwise.core.errors import CorruptLog
from forkwise.core.log.event_log import (
    EventLog,
    event_lines,
    event_types,
    last_index_of,
    lines_length,
)
from forkwise.core.log.events import Event


def sample() -> list[Event]:
    return events_of([*turn("T1"), *turn("T2", tool=True, approval=True), *turn("T3")])


def lazy_of(events: list[Event], *, typed: bool = True) -> EventLog:
    lines = [e.encode() for e in events]
    return EventLog.lazy(lines, [e.type for e in events] if typed else None)


def decoded(log: EventLog) -> int:
    return sum(1 for e in log._events if e is not None)


@pytest.mark.parametrize("typed", [True, False])
def test_a_lazy_log_equals_the_events_and_decodes_only_what_is_read(typed: bool) -> None:
    events = sample()
    log = lazy_of(events, typed=typed)
    assert len(log) == len(events)
    assert decoded(log) == 0
    assert log[3] == events[3]
    assert log[-1] == events[-1]
    assert decoded(log) == 2
    assert log[2:5] == tuple(events[2:5])
    assert decoded(log) == 4
    assert list(log) == events
    assert [e.raw for e in log] == [e.encode() for e in events]
    with pytest.raises(IndexError):
        log[len(events)]


def test_types_of_an_untyped_log_are_learnt_one_by_one() -> None:
    events = sample()
    log = lazy_of(events, typed=False)
    types = event_types(log.view())
    assert types[-1] == "turn/end"
    assert log._types.count(None) == len(events) - 1  # a backward scan reads what it sees
    assert decoded(log) == 0  # ... and builds no event to learn a type
    assert list(types) == [e.type for e in events]
    assert event_types(log.view(4))[:] == [e.type for e in events[:4]]


def test_a_view_is_a_fixed_prefix_while_its_log_grows() -> None:
    events = sample()
    log = EventLog(events[:5])
    view = log.view()
    log.extend(events[5:])
    assert len(view) == 5
    assert len(log) == len(events)
    assert view == tuple(events[:5])
    assert tuple(events[:5]) == view
    assert view != tuple(events[:6])
    assert list(reversed(view)) == events[4::-1]
    assert view[1:] == tuple(events[1:5])
    with pytest.raises(IndexError):
        view[5]
    assert event_types(view) == [e.type for e in events[:5]]


def test_a_prefix_shares_lines_and_takes_new_events() -> None:
    events = sample()
    log = lazy_of(events)
    extra = events_of([*turn("T9")], start=8)
    child = log.prefix(7, extra)
    assert list(child) == [*events[:7], *extra]
    assert len(log) == len(events)  # the source is untouched


def test_lines_and_their_length_reuse_the_bytes_read() -> None:
    events = sample()
    log = lazy_of(events)
    want = [e.encode() for e in events]
    assert list(event_lines(log.view())) == want
    assert list(event_lines(events)) == want
    assert lines_length(log.view(6)) == sum(len(line) + 1 for line in want[:6])
    assert lines_length(events[:6]) == lines_length(log.view(6))
    assert decoded(log) == 0


def test_an_event_built_without_bytes_is_encoded_for_its_line() -> None:
    (event,) = events_of([{"type": "session/title", "title": "x"}])
    bare = Event(event.seq, event.type, event.ts, event.fields)
    log = EventLog([bare])
    assert log.line(0) == event.encode()
    assert lines_length(log.view()) == len(event.encode()) + 1


def test_a_line_that_no_longer_decodes_is_a_corrupt_log() -> None:
    good = sample()[0]
    log = EventLog.lazy([good.encode(), b'{"seq":2,"type":"turn/start"'], None)
    assert log[0] == good
    with pytest.raises(CorruptLog):
        log[1]
    missing = orjson.dumps({"seq": 2, "type": "message", "ts": "t"})  # no required fields
    with pytest.raises(CorruptLog):
        EventLog.lazy([missing])[0]


def test_the_last_event_of_a_type_is_found_reading_only_lines_that_can_hold_it() -> None:
    events = events_of([
        {"type": "model/select", "provider": "offline", "model": "a"},
        *turn("T1"),
        {"type": "model/select", "provider": "offline", "model": "b"},
        *turn("T2", question="what does model/select do"),  # the words, not the type
        *turn("T3"),
    ])
    log = lazy_of(events, typed=False)
    found = last_index_of(log.view(), "model/select")
    assert found is not None
    assert events[found].get("model") == "b"
    assert decoded(log) == 0
    read = len(events) - log._types.count(None)
    assert read == 2  # the question that mentions it, and the select itself
    assert last_index_of(log.view(found), "model/select") == 0
    assert last_index_of(log, "no/such-type") is None
    assert last_index_of(events, "model/select") == found  # any sequence of events


def test_a_type_written_with_an_escape_is_still_found() -> None:
    plain = events_of([*turn("T1")])
    escaped = b'{"seq":%d,"type":"model\\/select","ts":"2026-01-01T00:00:00Z","provider":"offline",' \
              b'"model":"escaped"}' % (len(plain) + 1)
    log = EventLog.lazy([*(e.encode() for e in plain), escaped, *(e.encode() for e in events_of(
        [*turn("T2")], start=len(plain) + 2))])
    found = last_index_of(log, "model/select")
    assert found == len(plain)
    assert log[found].get("model") == "escaped"


def test_the_last_event_of_a_type_stays_right_as_the_log_grows_and_for_any_prefix() -> None:
    first = events_of([{"type": "model/select", "provider": "offline", "model": "a"},
                       *turn("T1"), *turn("T2")])
    log = lazy_of(first, typed=False)
    assert last_index_of(log, "model/select") == 0
    lines_read = len(first) - log._types.count(None)
    assert last_index_of(log, "model/select") == 0
    assert len(first) - log._types.count(None) == lines_read  # the answer was kept
    more = events_of([*turn("T3"), {"type": "model/select", "provider": "offline", "model": "b"},
                      *turn("T4")], start=len(first) + 1)
    log.extend(more)
    newest = last_index_of(log, "model/select")
    assert newest is not None
    assert log[newest].get("model") == "b"
    assert last_index_of(log.view(len(first)), "model/select") == 0  # an earlier prefix
    assert last_index_of(log, "model/select") == newest
    assert last_index_of(log.view(newest), "model/select") == 0


@pytest.mark.parametrize("skim", [True, False])
def test_a_fold_reads_the_type_a_decoder_would_see_whatever_the_line_looks_like(
    skim: bool,
) -> None:
    """records() skips a line by the type it starts with only when no other top-level
    "type" key could win when the line is decoded; an escaped or duplicated type is
    decoded and read as the decoder reads it. Without skimming (every line of unknown
    type decoded) the answer is the same."""
    plain = events_of([*turn("T1")])
    n = len(plain)
    odd = [
        # a title whose type is written with an escape
        b'{"seq":%d,"type":"session\\/title","ts":"2026-01-01T00:00:00Z","title":"escaped"}'
        % (n + 1),
        # starts as a step but a later duplicate key makes it a title when decoded
        b'{"seq":%d,"type":"step/start","ts":"2026-01-01T00:00:00Z","turn":"T1","step":"s",'
        b'"type":"session/title","title":"duplicate"}' % (n + 2),
        # a skipped type whose payload holds "type" keys of its own
        b'{"seq":%d,"type":"plugin/x/y","ts":"2026-01-01T00:00:00Z","data":{"type":"message"}}'
        % (n + 3),
    ]
    log = EventLog.lazy([*(e.encode() for e in plain), *odd])
    wanted = frozenset({"session/title", "message"})
    found = log.records(0, len(log), wanted, skim=skim)
    got = [(seq, etype, fields.get("title")) for seq, etype, fields, _ in found]
    messages = [e.seq for e in plain if e.type == "message"]
    assert got == [
        *((seq, "message", None) for seq in messages),
        (n + 1, "session/title", "escaped"),
        (n + 2, "session/title", "duplicate"),
    ]
    assert [log.type_at(i) for i in range(n, n + 3)] == ["session/title"] * 2 + ["plugin/x/y"]
