"""One pass that checks a session's events as the store's loader does and keeps their lines.

The loader (`backends/jsonl_read.parse_log`) checks each decoded line of a file; an import
checks each record a reader made before it is written. Both go through `LogCheck`: the
reserved keys and required fields of the event (`check_record`), the turn brackets and
message ids (`BracketState.step`), the listing's summary (`SummaryFold`), the fork point
from that fold as each turn ends (`PointTrack`: no event decoded twice), and what stays in
memory is each event's serialized line and type (`EventLog.lazy`), not a decoded `Event`:
an import of a few GB keeps bytes, which the cyclic collector never walks.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, NoReturn

import orjson

from forkwise.core.errors import InvalidEvent
from forkwise.core.log.event_log import EventLog, gc_paused
from forkwise.core.log.events import MAX_NESTING, TURN_END, check_record, line_too_deep
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import LoadedLog
from forkwise.core.store.fork_point import PointTrack
from forkwise.core.store.session import SessionHeader, SessionSummary, SummaryFold

Record = dict[str, Any]


class LogCheck:
    """A log checked event by event, in seq order."""

    __slots__ = ("at", "fold", "header", "lines", "start", "state", "track", "types")

    def __init__(self, header: SessionHeader) -> None:
        self.header = header
        self.start = SessionSummary.start(header)
        self.state = BracketState()
        self.fold = SummaryFold(self.start)
        self.lines: list[bytes] = []
        self.types: list[str] = []
        self.track = PointTrack()
        #: the index in `check_lines`'s lines of the line that failed the check
        self.at = 0

    def add(self, record: Record, raw: bytes) -> None:
        """Check `record`, decoded from `raw`, as the next event and keep its line;
        raises InvalidEvent and then keeps nothing of it."""
        self.check(record, raw)
        self.lines.append(raw)

    def check(self, record: Record, raw: bytes | None) -> None:
        """`add` without keeping the line (the caller gives the lines to `result`);
        `raw` None: the caller checked how deep the line nests."""
        seq, etype = check_record(record, raw)
        self.state.step(seq, etype, record)
        self.fold.add(etype, record["ts"], record)
        if etype == TURN_END:  # the fork point's values, from this decoding
            self.track.turn_end(len(self.types), record, self.fold)
        self.types.append(sys.intern(etype))

    def check_lines(self, lines: list[bytes], start: int) -> bool:
        """`check` of each line of `lines` from `start` on, decoded here, blank lines
        skipped; whether there was one. Raises orjson.JSONDecodeError or InvalidEvent,
        `at` then naming the line. The loader's hot path: `check`'s body is repeated
        here, its methods looked up once a file instead of once a line."""
        loads, check_line = orjson.loads, check_record
        fold, turn_end = self.fold, self.track.turn_end
        step, add = self.state.step, fold.add
        types = self.types
        keep, intern = types.append, sys.intern
        blank = False
        i = start
        try:
            for i in range(start, len(lines)):
                raw = lines[i]
                if not raw or raw.isspace():
                    blank = True
                    continue
                record = loads(raw)
                if type(record) is not dict:
                    raise InvalidEvent("an event must be a JSON object")
                seq, etype = check_line(record, raw)
                step(seq, etype, record)
                add(etype, record["ts"], record)
                if etype == TURN_END:
                    turn_end(len(types), record, fold)
                keep(intern(etype))
        except (orjson.JSONDecodeError, InvalidEvent):
            self.at = i
            raise
        return blank

    def result(self, torn_tail: bytes | None = None) -> LoadedLog:
        """The checked log: its lines decoded on access, its state, summary and point."""
        events = EventLog.lazy(self.lines, self.types)
        return LoadedLog(
            self.header,
            events,
            self.state,
            torn_tail,
            summary=self.fold.result(self.start),
            point=self.track.point(self.start, self.types, self.lines),
        )


def _encoder_depth() -> int:
    """How many containers deep orjson encodes before it refuses ("Recursion limit
    reached"): 254 in the orjson this project uses; found once rather than assumed. 0
    when it encodes 1024 levels (no limit to rely on: the lines are counted instead)."""
    value: list[Any] = []
    for depth in range(1, 1025):
        try:
            orjson.dumps(value)
        except TypeError:
            return depth - 1
        value = [value]
    return 0


#: containers an event is wrapped in when it is encoded, so that the encoder's own limit
#: refuses exactly the events that nest deeper than MAX_NESTING (0: the encoder cannot)
_WRAP = max(0, _encoder_depth() - MAX_NESTING)


def check_records(header: SessionHeader, records: Iterable[Record]) -> LoadedLog:
    """Records (`seq`, `type`, `ts`, fields; seq 1, 2, …) checked as the log of `header`
    and encoded once each; raises InvalidEvent naming the event that fails.

    The records hold JSON values as orjson decodes them and the readers build them (dict,
    list, str, int, float, bool, None): the nesting the loader refuses is found by the
    encoder itself, each event encoded inside `_WRAP` lists, instead of by counting the
    brackets of every line and decoding the ones with many (twice the encoding, for the
    large lines of a Claude Code import: measured)."""
    with gc_paused():
        check = LogCheck(header)
        dumps = orjson.dumps
        wrap = _WRAP
        # one wrapper per call (never shared: another thread may be encoding): its
        # innermost list holds the event being encoded
        inner: list[Any] = [None]
        outer: list[Any] = inner
        for _ in range(wrap - 1):
            outer = [outer]
        lines = check.lines
        for record in records:
            if type(record) is not dict:
                raise InvalidEvent("an event must be a JSON object")
            try:
                if wrap:
                    inner[0] = record
                    # the slice is the line: a copy of its exact size, and the encoder's
                    # buffer freed at once (keeping the encoder's results alive cost four
                    # times the encoding, measured)
                    raw = dumps(outer)[wrap:-wrap]
                else:
                    raw = dumps(record)
                    if line_too_deep(raw):
                        raise InvalidEvent(
                            f"an event's JSON nests deeper than {MAX_NESTING} levels"
                        )
            except TypeError as exc:
                _refuse(record, exc)
            check.check(record, None)
            lines.append(raw)
        inner[0] = None
        if header.seed_length > len(check.types):
            raise InvalidEvent(
                f"seedLength {header.seed_length} exceeds the {len(check.types)} events"
            )
        return check.result()


def _refuse(record: Record, exc: TypeError) -> NoReturn:
    """Why an event the encoder refused cannot be stored: it nests too deep (it encodes
    outside the wrapper) or it holds what JSON cannot."""
    try:
        orjson.dumps(record)
    except TypeError:
        raise InvalidEvent(f"event {record.get('type')!r} cannot be stored as JSON: {exc}") from exc
    raise InvalidEvent(f"an event's JSON nests deeper than {MAX_NESTING} levels") from exc
