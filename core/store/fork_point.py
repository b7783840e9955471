"""A log's last completed turn, as a fork there needs it.

The Fork button and `forkwise sessions fork ID` fork at the last completed turn. Knowing
where that turn ends, its anchors and what the log's summary was at that point lets a fork
copy the source's bytes without reading the source: the summary index keeps a `ForkPoint`
beside each log's facts (see `backends.catalogue`). It describes the prefix of the log
through that `turn/end`, so it stays true for as long as that prefix is unchanged: appends
leave it valid (a later turn end only moves it forward), a truncation before it does not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from forkwise.core.log.event_log import event_types, head
from forkwise.core.log.events import (
    MESSAGE,
    MODEL_SELECT,
    SESSION_TITLE,
    TURN_END,
    TURN_START,
    Event,
)
from forkwise.core.log.turns import last_completed_turn
from forkwise.core.store.session import SessionHeader, SessionSummary, SummaryFold


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """The prefix of a log through a `turn/end` at `seq`: the fork event's anchors and the
    summary counters of those events alone (a header's meta title apart)."""

    seq: int
    turn: str | None
    message: str | None
    turns: int
    messages: int
    #: the title the last `session/title` in the prefix set, and whether there was one
    title: str | None
    titled: bool
    model: str | None
    provider: str | None
    first_user_text: str | None
    updated: str
    reasoning: str | None = None

    def anchor(self) -> dict[str, Any]:
        """The anchor fields of a `history/fork` event at this point (`anchor_of`)."""
        out: dict[str, Any] = {"anchorTurn": self.turn}
        if self.message is not None:
            out["anchorMessage"] = self.message
        return out

    def summary(self, header: SessionHeader) -> SessionSummary:
        """The summary of a session with `header` whose log is this prefix (a fork's
        child, before its `history/fork`)."""
        start = SessionSummary.start(header)
        return replace(
            start,
            events=self.seq,
            turns=self.turns,
            messages=self.messages,
            running=False,
            title=self.title if self.titled else start.title,
            model=self.model,
            provider=self.provider,
            reasoning=self.reasoning,
            updated=max(self.updated, start.created),  # as SummaryFold.result dates it
            first_user_text=self.first_user_text,
        )

    def to_index(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "turn": self.turn,
            "message": self.message,
            "turns": self.turns,
            "messages": self.messages,
            "title": self.title,
            "titled": self.titled,
            "model": self.model,
            "provider": self.provider,
            "firstUserText": self.first_user_text,
            "updated": self.updated,
            "reasoning": self.reasoning,
        }

    @classmethod
    def from_index(cls, data: object) -> ForkPoint | None:
        """The point an index entry records, or None when it has none or it is malformed."""
        if type(data) is not dict:
            return None
        try:
            values = [data[key] for key in _INDEX_TYPES]
        except KeyError:
            return None
        for value, allowed in zip(values, _INDEX_TYPES.values(), strict=True):
            if type(value) not in allowed:
                return None
        point = cls(*values)
        if point.seq < 1 or point.turns < 1 or point.messages < 0:
            return None
        return point


_INT: frozenset[type] = frozenset({int})
_OPT: frozenset[type] = frozenset({str, type(None)})
#: index key → the exact types it may hold, in ForkPoint's field order
_INDEX_TYPES: dict[str, frozenset[type]] = {
    "seq": _INT, "turn": _OPT, "message": _OPT, "turns": _INT, "messages": _INT,
    "title": _OPT, "titled": frozenset({bool}), "model": _OPT, "provider": _OPT,
    "firstUserText": _OPT, "updated": frozenset({str}), "reasoning": _OPT,
}  # fmt: skip


def anchor_of(seed: Sequence[Event]) -> dict[str, Any]:
    """Where a fork came from, as far as the prefix tells: its last message and turn."""
    out: dict[str, Any] = {}
    types = event_types(seed)
    for i in range(len(types) - 1, -1, -1):
        etype = types[i]
        if etype == TURN_END and "anchorTurn" not in out:
            out["anchorTurn"] = seed[i].get("turn")
        elif etype == MESSAGE:
            out["anchorMessage"] = seed[i].get("id")
            break
        elif etype == TURN_START and "anchorTurn" in out:
            break  # the anchor turn has no message: never borrow an earlier turn's
    return out


def fork_point_of(
    events: Sequence[Event], known: ForkPoint | None = None, *, decode: bool = False
) -> ForkPoint | None:
    """The point of the last completed turn of `events`, or None when there is none or,
    unless `decode`, it would take decoding the whole log to find.

    `known`: a point of an earlier turn end of the same log, if any; the point is then
    brought forward over the events after it only. Without one, a log whose event types
    are all known (it was checked line by line) is counted by type, and only the few
    events the summary takes a value from are decoded."""
    if known is None and not decode and not isinstance(event_types(events), list):
        return None  # each type would be decoded to be learnt (even to find the turn end)
    b = last_completed_turn(events)
    if b is None:
        return None
    if known is not None and known.seq == b:
        return known
    prefix = head(events, b)
    if known is not None and known.seq < b:
        fold = _fold_from(known)
        titled = known.titled
        for i in range(known.seq, b):
            event = prefix[i]
            fold.add(event.type, event.ts, event.fields)
            titled = titled or event.type == SESSION_TITLE
        return _point(prefix, fold, titled)
    types = event_types(prefix)
    if not isinstance(types, list):
        if not decode:
            return None  # each type would be decoded to be learnt
        types = list(types)
    return _point(prefix, *_sparse_fold(prefix, types))


def _fold_from(point: ForkPoint) -> SummaryFold:
    base = SessionSummary(
        id="",
        created="",
        cwd="",
        title=point.title,
        events=point.seq,
        turns=point.turns,
        messages=point.messages,
        updated=point.updated,
        model=point.model,
        provider=point.provider,
        reasoning=point.reasoning,
        first_user_text=point.first_user_text,
    )
    return SummaryFold(base)


def _sparse_fold(prefix: Sequence[Event], types: list[str]) -> tuple[SummaryFold, bool]:
    """SummaryFold over `prefix`, fed only the events a value is taken from (the first
    user message, the last model and title, the last event), in log order; the counts
    are taken from the types."""
    b = len(types)
    fold = _fold_from(ForkPoint(0, None, None, 0, 0, None, False, None, None, None, ""))
    picked: set[int] = {b - 1}
    for etype in (MODEL_SELECT, SESSION_TITLE):
        last = _last_index(types, etype)
        if last is not None:
            picked.add(last)
    for i, etype in enumerate(types):
        if etype == MESSAGE and prefix[i].get("role") == "user":
            picked.add(i)
            break
    for i in sorted(picked):
        event = prefix[i]
        fold.add(event.type, event.ts, event.fields)
    fold.events, fold.turns, fold.messages = b, types.count(TURN_START), types.count(MESSAGE)
    return fold, SESSION_TITLE in types


def _last_index(types: list[str], etype: str) -> int | None:
    for i in range(len(types) - 1, -1, -1):
        if types[i] == etype:
            return i
    return None


def _point(prefix: Sequence[Event], fold: SummaryFold, titled: bool) -> ForkPoint | None:
    """The point of `prefix` (see `_point_at`)."""
    anchor: Mapping[str, Any] = anchor_of(prefix)
    return _point_at(
        len(prefix), anchor.get("anchorTurn"), anchor.get("anchorMessage"), fold, titled
    )


def _point_at(
    seq: int, turn: Any, message: Any, fold: SummaryFold, titled: bool
) -> ForkPoint | None:
    """The point, or None when a value the index could not hold back is not a string
    (a hand-written log may give a title or model of another type)."""
    if not all(
        value is None or type(value) is str
        for value in (turn, message, fold.title, fold.model, fold.provider, fold.reasoning)
    ):
        return None
    return ForkPoint(
        seq=seq,
        turn=turn,
        message=message,
        turns=fold.turns,
        messages=fold.messages,
        title=fold.title,
        titled=titled,
        model=fold.model,
        provider=fold.provider,
        first_user_text=fold.first_user,
        updated=fold.updated,
        reasoning=fold.reasoning,
    )



class PointTrack:
    """`fork_point_of` of a log being checked line by line, without decoding its events
    a second time: the check's own SummaryFold, as each `turn/end` left it, holds the
    counts and the values the sparse fold would decode (the last model and title, the
    first user message, the turn end's time), and the anchor message is the one line
    decoded again. Told of each `turn/end` right after the fold took it (`turn_end`);
    `point()` equals `fork_point_of` of the checked log (tests/core/test_fork_point.py
    holds them to it at every length of random logs)."""

    __slots__ = ("end",)

    def __init__(self) -> None:
        #: as the last turn end left it: its index, its record, and the fold's turns,
        #: messages, title, model, provider, reasoning and first user text then
        self.end: tuple[Any, ...] | None = None

    def turn_end(self, i: int, record: dict[str, Any], fold: SummaryFold) -> None:
        """Event i, a checked `turn/end`, was just folded into `fold`."""
        self.end = (
            i, record, fold.turns, fold.messages, fold.title, fold.model, fold.provider,
            fold.reasoning, fold.first_user,
        )  # fmt: skip

    def point(
        self, start: SessionSummary, types: list[str], lines: Sequence[bytes]
    ) -> ForkPoint | None:
        """The point of the last turn end told (`fork_point_of`), or None; `start`: the
        summary the fold started from, `types` and `lines`: the checked log's."""
        if self.end is None:
            return None
        i, end, turns, messages, title, model, provider, reasoning, first_user = self.end
        try:
            titled = types.index(SESSION_TITLE, 0, i) >= 0
        except ValueError:
            titled = False
        fold = _fold_from(ForkPoint(0, None, None, 0, 0, None, False, None, None, None, ""))
        fold.turns, fold.messages = turns - start.turns, messages - start.messages
        fold.title = title if titled else None
        fold.model, fold.provider, fold.reasoning = model, provider, reasoning
        fold.first_user, fold.updated = first_user, end["ts"]
        return _point_at(i + 1, end.get("turn"), _anchor_message(types, lines, i), fold, titled)


def _anchor_message(types: list[str], lines: Sequence[bytes], end: int) -> Any:
    """`anchor_of`'s message for the turn end at index `end`: the id of the last message
    before it in its turn, decoded from that message's (checked) line; None if none."""
    for j in range(end - 1, -1, -1):
        etype = types[j]
        if etype == MESSAGE:
            return orjson.loads(lines[j]).get("id")
        if etype == TURN_START:
            return None
    return None
