"""One pass that checks a session's events as the store's loader does and keeps their lines.

The loader (`backends/jsonl_read.parse_log`) checks each decoded line of a file; an import
checks each record a reader made before it is written. Both go through `LogCheck`: the
reserved keys and required fields of the event (`check_record`), the turn brackets and
message ids (`BracketState.step`), the listing's summary (`SummaryFold`), and what stays in
memory is each event's serialized line and type (`EventLog.lazy`), not a decoded `Event`:
an import of a few GB keeps bytes, which the cyclic collector never walks.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import orjson

from forkwise.core.errors import InvalidEvent
from forkwise.core.log.event_log import EventLog, gc_paused
from forkwise.core.log.events import MAX_NESTING, check_record, line_too_deep
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import LoadedLog
from forkwise.core.store.fork_point import fork_point_of
from forkwise.core.store.session import SessionHeader, SessionSummary, SummaryFold

Record = dict[str, Any]


class LogCheck:
    """A log checked event by event, in seq order."""

    __slots__ = ("fold", "header", "lines", "start", "state", "types")

    def __init__(self, header: SessionHeader) -> None:
        self.header = header
        self.start = SessionSummary.start(header)
        self.state = BracketState()
        self.fold = SummaryFold(self.start)
        self.lines: list[bytes] = []
        self.types: list[str] = []

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
        self.types.append(sys.intern(etype))

    def result(self, torn_tail: bytes | None = None) -> LoadedLog:
        """The checked log: its lines decoded on access, its state, summary and point."""
        events = EventLog.lazy(self.lines, self.types)
        return LoadedLog(
            self.header,
            events,
            self.state,
            torn_tail,
            summary=self.fold.result(self.start),
            point=fork_point_of(events),
        )


def check_records(header: SessionHeader, records: Iterable[Record]) -> LoadedLog:
    """Records (`seq`, `type`, `ts`, fields; seq 1, 2, …) checked as the log of `header`
    and encoded once each; raises InvalidEvent naming the event that fails."""
    with gc_paused():
        check = LogCheck(header)
        dumps = orjson.dumps
        # the lines are put together in one buffer and split once: keeping each encoder
        # result alive costs four times the encoding (measured), a split's lines do not
        text = bytearray()
        for record in records:
            if type(record) is not dict:
                raise InvalidEvent("an event must be a JSON object")
            try:
                raw = dumps(record)
            except TypeError as exc:
                raise InvalidEvent(
                    f"event {record.get('type')!r} cannot be stored as JSON: {exc}"
                ) from exc
            if line_too_deep(raw):
                raise InvalidEvent(f"an event's JSON nests deeper than {MAX_NESTING} levels")
            check.check(record, None)
            text += raw
            text += b"\n"
        if header.seed_length > len(check.types):
            raise InvalidEvent(
                f"seedLength {header.seed_length} exceeds the {len(check.types)} events"
            )
        # an encoded line holds no newline (JSON escapes it in strings)
        check.lines = bytes(text).split(b"\n")[:-1] if text else []
        return check.result()
