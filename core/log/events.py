"""Frozen event records and the vocabulary of the session log.

A log line is `{"seq": N, "type": T, "ts": ISO-8601, …payload fields…}`. Known types have
their required fields checked; unknown types (a newer version, a plugin) are kept as they
are and round-trip unchanged. Each event keeps the exact bytes it was read from, so a fork
copies serialized lines instead of encoding every event again.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final

import orjson

from forkwise.core.errors import InvalidEvent
from forkwise.core.log.plain_json import plain_copy

TURN_START: Final = "turn/start"
TURN_END: Final = "turn/end"
STEP_START: Final = "step/start"
STEP_END: Final = "step/end"
MESSAGE: Final = "message"
TOOL_RESULT: Final = "tool/result"
APPROVAL_REQUEST: Final = "approval/request"
APPROVAL_RESOLVE: Final = "approval/resolve"
MODEL_SELECT: Final = "model/select"
SESSION_TITLE: Final = "session/title"
HISTORY_FORK: Final = "history/fork"
CONTEXT_SUMMARY: Final = "context/summary"

#: Event types that only make sense inside a turn bracket.
TURN_SCOPED: Final = frozenset(
    {STEP_START, STEP_END, MESSAGE, TOOL_RESULT, APPROVAL_REQUEST, APPROVAL_RESOLVE}
)
#: Statuses a `turn/end` may carry; any status closes the turn.
TURN_STATUSES: Final = frozenset({"completed", "cancelled", "failed", "interrupted"})
ROLES: Final = frozenset({"user", "assistant"})
RESERVED: Final = frozenset({"seq", "type", "ts"})
#: How deep a line's JSON may nest. The encoder stops at 255 levels, and an event must still
#: fit inside the envelopes that carry it (JSON-RPC results, CLI output) and replay.
MAX_NESTING: Final = 200

_REQUIRED: Final[dict[str, tuple[tuple[str, type], ...]]] = {
    TURN_START: (("turn", str),),
    TURN_END: (("turn", str), ("status", str)),
    STEP_START: (("turn", str), ("step", str)),
    STEP_END: (("turn", str), ("step", str)),
    MESSAGE: (("id", str), ("role", str), ("turn", str), ("parts", list)),
    TOOL_RESULT: (("turn", str), ("call", str), ("tool", str)),
    APPROVAL_REQUEST: (("turn", str), ("approval", str), ("call", str), ("tool", str)),
    APPROVAL_RESOLVE: (("turn", str), ("approval", str), ("decision", str)),
    MODEL_SELECT: (("provider", str), ("model", str)),
    SESSION_TITLE: (("title", str),),
    HISTORY_FORK: (("source", str), ("boundary", int)),
}


def now_ts() -> str:
    """The current time as the log writes it: UTC, millisecond precision. Formatted once
    a millisecond (a turn's events share it; formatting is most of the cost)."""
    ms = time.time_ns() // 1_000_000
    last = _last_ts[0]
    if ms == last[0]:
        return last[1]
    moment = datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=ms % 1000 * 1000)
    text = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    _last_ts[0] = (ms, text)
    return text


#: the millisecond `now_ts` formatted last, and its text (one tuple: read whole by any thread)
_last_ts: list[tuple[int, str]] = [(-1, "")]


@dataclass(frozen=True, slots=True)
class Event:
    """One immutable log entry. `raw` is the serialized line (without newline), if known."""

    seq: int
    type: str
    ts: str
    fields: Mapping[str, Any]
    raw: bytes | None = field(default=None, compare=False, repr=False)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"seq": self.seq, "type": self.type, "ts": self.ts}
        record.update(self.fields)
        return record

    def encode(self) -> bytes:
        """The line for this event, reusing the bytes it was read from."""
        return self.raw if self.raw is not None else orjson.dumps(self.to_record())

    @classmethod
    def from_record(cls, record: object, raw: bytes | None = None) -> Event:
        """Validate a decoded line and build the event; raises InvalidEvent."""
        if not isinstance(record, dict):
            raise InvalidEvent("an event must be a JSON object")
        return cls.from_decoded(dict(record), raw)

    @classmethod
    def from_decoded(cls, record: dict[str, Any], raw: bytes | None = None) -> Event:
        """Like from_record, but takes ownership of `record` (a dict fresh from the decoder):
        the reserved keys are popped in place and the rest becomes the payload."""
        seq, etype = check_record(record, raw)
        del record["seq"], record["type"]
        ts = record.pop("ts")
        return _made(seq, etype, ts, MappingProxyType(record), raw)

    @classmethod
    def build(
        cls, seq: int, etype: str, payload: Mapping[str, Any], ts: str | None = None
    ) -> Event:
        """A new event for appending; its line is encoded once, here."""
        check_fields(etype, payload)
        return cls._encoded(seq, etype, ts or now_ts(), payload, plain_copy(payload))

    @classmethod
    def from_draft(cls, seq: int, draft: Mapping[str, Any], ts: str) -> Event:
        """`build` from a draft `{"type": …, fields…}`: its own `ts` when it gives a
        string, else `ts`; a `seq` it gives is not kept. One copy of a plain draft serves
        as both the payload and the fields."""
        etype = draft.get("type")
        if not isinstance(etype, str) or not etype:
            raise InvalidEvent("a draft needs a non-empty 'type'")
        own_ts = draft.get("ts")
        fields = plain_copy(draft)
        if fields is None:
            payload: Mapping[str, Any] = {k: v for k, v in draft.items() if k not in RESERVED}
        else:
            del fields["type"]
            fields.pop("ts", None)
            fields.pop("seq", None)
            payload = fields
        # `check_fields` less its reserved keys: the payload has none, either way
        required = _REQUIRED.get(etype)
        if required is not None:
            _check_required(etype, payload, required, None)
        return cls._encoded(
            seq, etype, own_ts if isinstance(own_ts, str) else ts, payload, fields
        )

    @classmethod
    def _encoded(
        cls,
        seq: int,
        etype: str,
        ts: str,
        payload: Mapping[str, Any],
        fields: dict[str, Any] | None,
    ) -> Event:
        """The event of a checked payload, its line encoded; `fields`: the payload's
        plain copy (`plain_copy`), or None to decode them from the line."""
        try:
            raw = orjson.dumps({"seq": seq, "type": etype, "ts": ts, **payload})
        except TypeError as exc:
            raise InvalidEvent(f"event {etype!r} cannot be stored as JSON: {exc}") from exc
        # the fields as a reader of the line gets them: a copy of a payload of plain JSON
        # values is that already; anything else is decoded from the line
        if fields is None:
            fields = orjson.loads(raw)
            del fields["seq"], fields["type"], fields["ts"]
        if too_deep(raw, fields):
            raise InvalidEvent(f"event {seq}: JSON nested deeper than {MAX_NESTING} levels")
        return _made(seq, etype, ts, MappingProxyType(fields), raw)


_new_event = object.__new__
_set_seq, _set_type, _set_ts, _set_fields, _set_raw = (
    vars(Event)[name].__set__ for name in ("seq", "type", "ts", "fields", "raw")
)


def _made(
    seq: int, etype: str, ts: str, fields: Mapping[str, Any], raw: bytes | None
) -> Event:
    """`Event(seq, etype, ts, fields, raw)` of values already checked, without the frozen
    dataclass's `__init__` (one `object.__setattr__` call a field): its slots are set
    directly, in half the time (0.35 against 0.63 us; an event is made for every line a
    session reads and every event it appends)."""
    event = _new_event(Event)
    _set_seq(event, seq)
    _set_type(event, etype)
    _set_ts(event, ts)
    _set_fields(event, fields)
    _set_raw(event, raw)
    return event


def check_record(record: dict[str, Any], raw: bytes | None = None) -> tuple[int, str]:
    """Check a decoded line as an event (reserved keys and the required fields of its type)
    without building one; returns its seq and type. This is the loader's hot path: once a
    line, so the required fields are checked here rather than through a call."""
    get = record.get
    seq = get("seq")
    etype = get("type")
    if type(seq) is not int or seq < 1:
        raise InvalidEvent(f"event seq must be a positive integer, got {seq!r}")
    if type(etype) is not str or not etype:
        raise InvalidEvent(f"event {seq}: type must be a non-empty string")
    if type(get("ts")) is not str:
        raise InvalidEvent(f"event {seq}: ts must be a string")
    required = _REQUIRED.get(etype)
    if required is not None:
        for name, kind in required:
            if type(get(name)) is not kind:
                _check_required(etype, record, required, seq)  # raises, naming the field
        if etype == MESSAGE:
            if record["role"] not in ROLES:
                _check_required(etype, record, required, seq)
        elif etype == HISTORY_FORK and record["boundary"] < 0:
            _check_required(etype, record, required, seq)
    if (
        raw is not None
        and len(raw) > _BRACKETS_FLOOR
        and len(raw.translate(None, _NOT_OPENING)) > MAX_NESTING
        and _deeper(record)
    ):
        raise InvalidEvent(f"event {seq}: JSON nested deeper than {MAX_NESTING} levels")
    return seq, etype


def too_deep(raw: bytes, value: object) -> bool:
    """Whether `value` (decoded from `raw`) nests deeper than MAX_NESTING. The byte counts
    make this free for ordinary lines; only a line with that many brackets is walked."""
    return _many_brackets(raw) and _deeper(value)


def line_too_deep(raw: bytes) -> bool:
    """`too_deep` for a line that was encoded, not decoded: decoded only when it holds
    that many brackets (the line, not what it was encoded from, is what a reader gets)."""
    return _many_brackets(raw) and _deeper(orjson.loads(raw))


#: a line shorter than this cannot hold MAX_NESTING opening brackets and their closers
_BRACKETS_FLOOR: Final = 2 * MAX_NESTING


#: every byte but the opening brackets: a line without them (`bytes.translate`) is its
#: `[` and `{`, counted in one scan of the line instead of two (`raw.count` of each: 0.105
#: against 0.081 s over the 90,000 lines longer than _BRACKETS_FLOOR of 3,000 synth logs)
_NOT_OPENING: Final = bytes(b for b in range(256) if b not in b"[{")


def _many_brackets(raw: bytes) -> bool:
    """Whether `raw` holds more opening brackets than a value MAX_NESTING deep needs at
    least (`check_record` repeats it inline): only such a line is walked."""
    return len(raw) > _BRACKETS_FLOOR and len(raw.translate(None, _NOT_OPENING)) > MAX_NESTING


def _deeper(value: object) -> bool:
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if depth > MAX_NESTING:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):  # only containers are walked
                push((child, depth + 1))
    return False


def check_fields(etype: str, payload: Mapping[str, Any], seq: int | None = None) -> None:
    """Check that a payload may be stored: no reserved keys, and the required fields of a
    known event type."""
    if not RESERVED.isdisjoint(payload):
        bad = sorted(RESERVED.intersection(payload))
        where = f"event {seq} ({etype})" if seq is not None else f"event {etype}"
        raise InvalidEvent(f"{where}: payload may not set {bad}")
    required = _REQUIRED.get(etype)
    if required is not None:
        _check_required(etype, payload, required, seq)


def _check_required(
    etype: str,
    payload: Mapping[str, Any],
    required: tuple[tuple[str, type], ...],
    seq: int | None,
) -> None:
    """The rule of a known type's required fields; raises InvalidEvent naming what breaks
    it. `check_record` repeats it inline (once a line) and calls this when it fails."""
    for name, kind in required:
        # exact type: JSON decodes to exact types, and bool must not pass for int
        if type(payload.get(name)) is not kind:
            where = f"event {seq} ({etype})" if seq is not None else f"event {etype}"
            raise InvalidEvent(f"{where}: field {name!r} is missing or has the wrong type")
    if etype == MESSAGE and payload["role"] not in ROLES:
        raise InvalidEvent(f"event {seq} ({etype}): role must be one of {sorted(ROLES)}")
    if etype == HISTORY_FORK and payload["boundary"] < 0:
        raise InvalidEvent(f"event {seq} ({etype}): boundary must not be negative")


def message_text(event: Event | Mapping[str, Any]) -> str:
    """The visible text of a message event (text parts joined)."""
    parts = event.get("parts") or ()
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
