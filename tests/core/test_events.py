"""Event.build: the event a writer builds is the one a reader of its line gets back, and
what the loader would refuse is never built."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples, payloads
from typed_json import same_json

from forkwise.core.errors import InvalidEvent
from forkwise.core.log.events import (
    _REQUIRED,
    HISTORY_FORK,
    MAX_NESTING,
    MESSAGE,
    Event,
    check_fields,
    check_record,
)


@given(seq=st.integers(1, 10**6), payload=payloads)
@examples(default=200, long=2000)
def test_a_built_event_is_what_reading_its_line_gives(seq: int, payload: dict[str, Any]) -> None:
    built = Event.build(seq, "plugin/test", payload, "2026-01-01T00:00:00.000Z")
    assert built.raw is not None
    read = Event.from_record(orjson.loads(built.raw), built.raw)
    assert (built.seq, built.type, built.ts, dict(built.fields)) == (
        read.seq, read.type, read.ts, dict(read.fields),
    )
    assert built.encode() == built.raw


def test_build_stamps_the_time_when_none_is_given() -> None:
    event = Event.build(1, "plugin/test", {"a": 1})
    assert event.ts.endswith("Z")
    assert len(event.ts) == len("2026-01-01T00:00:00.000Z")
    assert orjson.loads(event.encode())["ts"] == event.ts


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def mixed(depth: int, kinds: str) -> Any:
    """A value `depth` containers deep, the i-th of kind kinds[i % len(kinds)] ("[" or
    "{"), the innermost empty."""
    value: Any = [] if kinds[(depth - 1) % len(kinds)] == "[" else {}
    for i in range(depth - 2, -1, -1):
        value = [value] if kinds[i % len(kinds)] == "[" else {"k": value}
    return value


@pytest.mark.parametrize("kinds", ["[", "{", "[{", "{[", "[[{"])
@pytest.mark.parametrize("padding", [0, 5000])
def test_the_loader_refuses_a_line_by_its_depth_whatever_its_brackets(
    kinds: str, padding: int
) -> None:
    """check_record walks only a line with more opening brackets than MAX_NESTING (lists
    and objects alike, counted in one scan): a line one level too deep is refused however
    its containers mix, and brackets inside strings only make a shallow line walked."""
    text = "x" * padding
    for depth, refused in ((MAX_NESTING - 1, False), (MAX_NESTING, True)):
        record = {"seq": 1, "type": "plugin/t", "ts": "x", "s": text, "v": mixed(depth, kinds)}
        raw = orjson.dumps(record)
        assert raw.count(b"[") + raw.count(b"{") == depth + 1
        if refused:
            with pytest.raises(InvalidEvent, match="nested deeper"):
                check_record(orjson.loads(raw), raw)
        else:
            assert check_record(orjson.loads(raw), raw) == (1, "plugin/t")
    brackets = "[{" * MAX_NESTING + "]}" * MAX_NESTING
    shallow = {"seq": 2, "type": "plugin/t", "ts": "x", "s": brackets, "v": mixed(3, kinds)}
    raw = orjson.dumps(shallow)
    assert check_record(orjson.loads(raw), raw) == (2, "plugin/t")


def test_build_refuses_nesting_the_loader_would_refuse() -> None:
    # the payload sits one level inside the event object
    Event.build(1, "plugin/test", {"v": nested(MAX_NESTING - 1)})
    with pytest.raises(InvalidEvent, match="nested deeper"):
        Event.build(1, "plugin/test", {"v": nested(MAX_NESTING)})


@pytest.mark.parametrize(
    "payload",
    [
        {"seq": 3},
        {"ts": "x"},
        {"id": "m", "role": "robot", "parts": []},
        {"id": 7, "role": "user", "parts": []},
        {"id": "m", "role": "user"},
    ],
)
def test_build_refuses_payloads_a_reader_would_refuse(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent):
        Event.build(1, MESSAGE, payload)


def _valid(etype: str) -> dict[str, Any]:
    """A payload of `etype` with every required field present and of its type."""
    values = {str: "x", int: 1, list: []}
    payload = {name: values[kind] for name, kind in _REQUIRED[etype]}
    if etype == MESSAGE:
        payload["role"] = "user"
    return payload


def _broken(etype: str) -> list[dict[str, Any]]:
    """Payloads of `etype` that a reader refuses: each required field missing, each of the
    wrong type (a bool for an int too), a role outside the roles, a negative boundary."""
    out: list[dict[str, Any]] = []
    for name, kind in _REQUIRED[etype]:
        missing = _valid(etype)
        del missing[name]
        out.append(missing)
        out.append({**_valid(etype), name: True if kind is int else 0})
    if etype == MESSAGE:
        out.append({**_valid(etype), "role": "robot"})
    if etype == HISTORY_FORK:
        out.append({**_valid(etype), "boundary": -1})
    return out


@pytest.mark.parametrize("etype", sorted(_REQUIRED))
def test_the_loader_and_the_writer_refuse_the_same_fields(etype: str) -> None:
    """The loader's check of a decoded line (`check_record`, its hot path) and the
    writer's check of a payload (`check_fields`) agree, word for word."""
    record = {"seq": 4, "type": etype, "ts": "t", **_valid(etype)}
    assert check_record(record, orjson.dumps(record)) == (4, etype)
    check_fields(etype, _valid(etype), 4)
    for payload in _broken(etype):
        with pytest.raises(InvalidEvent) as written:
            check_fields(etype, payload, 4)
        record = {"seq": 4, "type": etype, "ts": "t", **payload}
        with pytest.raises(InvalidEvent) as read:
            check_record(record, orjson.dumps(record))
        assert str(read.value) == str(written.value)


def _read_back(event: Event) -> Event:
    assert event.raw is not None
    return Event.from_record(orjson.loads(event.raw), event.raw)


@given(seq=st.integers(1, 10**6), payload=payloads)
@examples(default=200, long=2000)
def test_built_fields_have_the_types_a_reader_gets(seq: int, payload: dict[str, Any]) -> None:
    built = Event.build(seq, "plugin/test", payload, "2026-01-01T00:00:00.000Z")
    assert same_json(dict(built.fields), dict(_read_back(built).fields))


class _Text(str):
    pass


class _Number(int):
    pass


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        [(1,), {"a": (2, 3)}],
        _Text("sub"),
        {"k": _Text("sub")},
        _Number(3),
        [_Number(3)],
        float("nan"),
        float("inf"),
        [float("-inf")],
        {"n": OrderedDict(a=1)},
        1.0,
        -0.0,
        True,
        2**63 - 1,
    ],
)
def test_values_a_line_would_change_are_what_the_line_reads_back(value: Any) -> None:
    """A tuple becomes a list, a subclass its base, NaN and the infinities null: what is
    built is what is read, type for type."""
    built = Event.build(1, "plugin/test", {"v": value, "w": [value]})
    assert same_json(dict(built.fields), dict(_read_back(built).fields))


def test_built_fields_share_nothing_with_the_payload() -> None:
    parts = [{"type": "text", "text": "hi"}]
    payload = {"id": "m", "role": "user", "turn": "t", "parts": parts, "meta": {"a": [1]}}
    built = Event.build(1, MESSAGE, payload)
    parts[0]["text"] = "changed"
    parts.append({"type": "text", "text": "more"})
    payload["meta"]["a"].append(2)  # type: ignore[index]
    payload["extra"] = 1
    assert same_json(dict(built.fields), dict(_read_back(built).fields))
    assert built.fields["parts"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(
    "payload",
    [{"v": object()}, {"v": {1: "x"}}, {"v": [{"k": {2: 3}}]}, {"v": {"s"}}, {"v": 2**64}],
)
def test_build_refuses_what_a_line_cannot_hold(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent, match="cannot be stored as JSON"):
        Event.build(1, "plugin/test", payload)


@given(seq=st.integers(1, 10**6), payload=payloads, own_ts=st.sampled_from([None, "t0", 5]))
@examples(default=200, long=2000)
def test_an_event_from_a_draft_is_the_one_built_from_its_payload(
    seq: int, payload: dict[str, Any], own_ts: Any
) -> None:
    """`from_draft` (the store's appends) is `build` of the draft less its type, ts and
    seq, at the draft's own ts when it is a string."""
    draft: dict[str, Any] = {"type": "plugin/test", **payload, "seq": 99}
    if own_ts is not None:
        draft["ts"] = own_ts
    ts = own_ts if isinstance(own_ts, str) else "2026-01-01T00:00:00.000Z"
    built = Event.build(seq, "plugin/test", payload, ts)
    drafted = Event.from_draft(seq, draft, "2026-01-01T00:00:00.000Z")
    assert drafted.raw == built.raw
    assert (drafted.seq, drafted.type, drafted.ts) == (built.seq, built.type, built.ts)
    assert same_json(dict(drafted.fields), dict(built.fields))
    assert same_json(dict(drafted.fields), dict(_read_back(drafted).fields))


@pytest.mark.parametrize("value", [(1, 2), _Text("sub"), float("nan"), {"k": [(1,)]}])
def test_a_draft_a_line_would_change_is_what_the_line_reads_back(value: Any) -> None:
    drafted = Event.from_draft(3, {"type": "plugin/test", "v": value, "ts": "t"}, "now")
    assert drafted.ts == "t"
    assert same_json(dict(drafted.fields), dict(_read_back(drafted).fields))


@pytest.mark.parametrize(
    "draft",
    [{}, {"type": ""}, {"type": 3}, {"type": "plugin/test", "v": object()}, {"type": MESSAGE}],
)
def test_from_draft_refuses_what_build_refuses(draft: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent):
        Event.from_draft(1, draft, "now")


def test_now_ts_is_the_utc_millisecond_in_the_log_s_format() -> None:
    """`now_ts` formats once a millisecond: each call still gives the current millisecond,
    as datetime formats it, between the times read around it."""
    import time
    from datetime import UTC, datetime

    from forkwise.core.log.events import now_ts

    def formatted(ms: int) -> str:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    seen = set()
    deadline = time.monotonic() + 5
    while len(seen) < 20 and time.monotonic() < deadline:  # 20 different milliseconds
        before = time.time_ns() // 1_000_000
        text = now_ts()
        after = time.time_ns() // 1_000_000
        assert text in {formatted(ms) for ms in range(before, after + 1)}
        assert len(text) == len("2026-12-04T15:12:34.209Z")
        assert text.endswith("Z")
        seen.add(text)
    assert len(seen) == 20


def test_an_event_made_by_the_store_equals_one_made_by_its_constructor() -> None:
    """Events are made without the dataclass's `__init__` on the hot paths: they are the
    same frozen values as `Event(...)` gives."""
    import dataclasses

    built = Event.from_draft(3, {"type": "turn/start", "turn": "t1"}, "2026-01-01T00:00:00.000Z")
    read = Event.from_record(orjson.loads(built.raw or b""), built.raw)
    plain = Event(3, "turn/start", "2026-01-01T00:00:00.000Z", {"turn": "t1"}, built.raw)
    assert built == read == plain
    assert built.raw == read.raw == plain.raw
    assert type(built) is Event
    assert dict(built.fields) == {"turn": "t1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.seq = 4  # type: ignore[misc]
