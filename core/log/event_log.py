"""An append-only list of events that decodes each event the first time it is read.

A session file is validated line by line when it is loaded, but what stays in memory is
the serialized lines and each event's type: building a frozen `Event` for every line of a
100,000-event log costs five times the JSON decoding and keeps about 2 KB per event alive.
Most readers need few events — a page of the transcript, the last turn, a fork's seed
bytes — so the rest are decoded only when someone asks for them.

`EventView` is the read-only prefix a `Session` snapshot holds: the log only grows while
it is the store's current log (truncation replaces it with a new one), so the first n
events seen through a view never change.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast, overload

import orjson

from forkwise.core.errors import CorruptLog, InvalidEvent
from forkwise.core.log.events import Event
from forkwise.core.log.views import PrefixView, position


class EventLog(Sequence[Event]):
    """The events of one session, in seq order (event i has seq i + 1)."""

    __slots__ = ("_events", "_last", "_lines", "_typed", "_types")

    def __init__(self, events: Iterable[Event] = ()) -> None:
        decoded = list(events)
        self._events: list[Event | None] = list(decoded)
        self._lines: list[bytes | None] = [e.raw for e in decoded]
        self._types: list[str | None] = [e.type for e in decoded]
        self._typed = True  # every entry of _types is known
        #: per type, the last answer of `last_index_of`: (events it looked at, the index)
        self._last: dict[str, tuple[int, int | None]] = {}

    @classmethod
    def lazy(cls, lines: list[bytes], types: list[str] | None = None) -> EventLog:
        """A log of checked lines (one per event), decoded on access. Without `types`, an
        event's type is learnt by decoding it the first time a scan asks for it."""
        if types is not None and len(types) != len(lines):
            raise ValueError("a lazily decoded log needs one type per line")
        out = cls.__new__(cls)
        out._events = [None] * len(lines)
        out._lines = list(lines)
        out._types = list(types) if types is not None else [None] * len(lines)
        out._typed = types is not None
        out._last = {}
        return out

    def __len__(self) -> int:
        return len(self._types)

    @property
    def types(self) -> Sequence[str]:
        """Each event's type (see `event_types`)."""
        return self.types_of(len(self._types))

    def types_of(self, n: int) -> Sequence[str]:
        if not self._typed:
            return _Types(self, n)
        # every type is known: no None in the list
        return cast("list[str]", self._types if n == len(self._types) else self._types[:n])

    def type_at(self, i: int) -> str:
        etype = self._types[i]
        if etype is None:
            etype = self._types[i] = self._type_of(i)
        return etype

    def _type_of(self, i: int) -> str:
        """Event i's type, read off its line without building the event (a scan for one
        type, such as the latest model/select, reads every line of a long log)."""
        event, raw = self._events[i], self._lines[i]
        if event is not None or raw is None:
            return self._at(i).type
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:  # validated at load
            raise CorruptLog(f"event {i + 1} no longer decodes: {exc}") from exc
        etype = record.get("type") if isinstance(record, dict) else None
        return etype if isinstance(etype, str) and etype else self._at(i).type

    def last_index_of(self, etype: str, n: int) -> int | None:
        """The index of the last event of type `etype` among the first n. A line not read
        yet is skipped unread when it holds no backslash and not `etype`'s bytes: without
        escapes, every JSON string in it is there as it is, its type too. The answer is
        kept, so that the next question looks only at events appended since (the log only
        grows)."""
        seen, found = self._last.get(etype, (0, None))
        if n < seen:  # a shorter prefix than last time: look at all of it
            seen, found = 0, None
        needle = etype.encode()
        for i in range(n - 1, seen - 1, -1):
            known = self._types[i]
            if known is None:
                raw = self._lines[i]
                if raw is not None and needle not in raw and b"\\" not in raw:
                    continue
                known = self.type_at(i)
            if known == etype:
                found = i
                break
        if n >= self._last.get(etype, (0, None))[0]:
            self._last[etype] = (n, found)
        return found

    def byte_length(self, n: int) -> int:
        """Bytes of the first n lines, one newline each included."""
        lines = self._lines[:n]
        if None in lines:
            return sum(len(self.line(i)) for i in range(n)) + n
        return sum(map(len, lines)) + n  # type: ignore[arg-type]  # no None here

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Event, ...]: ...
    def __getitem__(self, index: int | slice) -> Event | tuple[Event, ...]:
        if isinstance(index, slice):
            return tuple(self._at(i) for i in range(*index.indices(len(self._types))))
        return self._at(position(index, len(self._types)))

    def __iter__(self) -> Iterator[Event]:
        for i in range(len(self._types)):
            yield self._at(i)

    def _at(self, i: int) -> Event:
        event = self._events[i]
        if event is None:
            raw = self._lines[i]
            assert raw is not None  # a line without an event is never stored
            try:
                event = Event.from_decoded(orjson.loads(raw), raw)
            except (orjson.JSONDecodeError, InvalidEvent) as exc:  # validated at load
                raise CorruptLog(f"event {i + 1} no longer decodes: {exc}") from exc
            self._events[i] = event
        return event

    def line(self, i: int) -> bytes:
        """The serialized line of event i (without newline), encoding it if it has none."""
        raw = self._lines[i]
        return raw if raw is not None else self._at(i).encode()

    def lines(self, n: int) -> list[bytes]:
        """The serialized lines of the first n events (a list slice when all are known)."""
        found = self._lines[:n]
        if None in found:
            return [self.line(i) for i in range(n)]
        return found  # type: ignore[return-value]  # no None here

    def extend(self, events: Iterable[Event]) -> None:
        for event in events:
            self._events.append(event)
            self._lines.append(event.raw)
            self._types.append(event.type)  # last: len() counts an event once it is whole

    def prefix(self, n: int, then: Iterable[Event] = ()) -> EventLog:
        """A new log of this one's first n events (shared, not decoded) followed by `then`."""
        out = EventLog.__new__(EventLog)
        out._events = self._events[:n]
        out._lines = self._lines[:n]
        out._types = self._types[:n]
        out._typed = self._typed
        out._last = {}
        out.extend(then)
        return out

    def records(
        self, start: int, stop: int, wanted: frozenset[str], *, skim: bool = True
    ) -> Iterator[tuple[int, str, Mapping[str, Any], Event | None]]:
        """(seq, type, fields, event) of events start..stop-1 whose type is in `wanted`.
        A line not decoded yet is decoded here and not kept (a fold reads each once):
        `fields` is then the whole decoded line and `event` None. A line is skipped
        undecoded when its type is known and not wanted, or (`skim`) when its first bytes
        name a type not wanted, or it holds no backslash and no wanted type's quoted bytes.

        Skimming pays when few lines are wanted (the message ids of a log). A fold that
        wants most lines passes `skim=False`: every line of unknown type is decoded, which
        costs less than reading each line's lead first (100,000 lines of which 59,000 are
        wanted: 0.069 s against 0.095 s)."""
        if not skim:
            return self._decoded_records(start, stop, wanted)
        return self._skimmed_records(start, stop, wanted)

    def _decoded_records(
        self, start: int, stop: int, wanted: frozenset[str]
    ) -> Iterator[tuple[int, str, Mapping[str, Any], Event | None]]:
        types = self._types
        # `stop` <= len(self): each list holds that many (`extend` appends types last)
        rows = zip(
            self._events[start:stop], types[start:stop], self._lines[start:stop], strict=True
        )
        for i, (event, known, raw) in enumerate(rows, start):
            if event is not None:
                if event.type in wanted:
                    yield i + 1, event.type, event.fields, event
                continue
            if known is not None and known not in wanted:
                continue
            assert raw is not None  # a line without an event is never stored
            etype, record = _typed_record(raw, i, known, types)
            if etype in wanted:
                yield i + 1, etype, record, None

    def _skimmed_records(
        self, start: int, stop: int, wanted: frozenset[str]
    ) -> Iterator[tuple[int, str, Mapping[str, Any], Event | None]]:
        maybe = _type_pattern(wanted).search
        lead = _LEAD.match
        events, lines, types = self._events, self._lines, self._types
        for i in range(start, stop):
            event = events[i]
            if event is not None:
                if event.type in wanted:
                    yield i + 1, event.type, event.fields, event
                continue
            etype = types[i]
            raw = lines[i]
            assert raw is not None  # a line without an event is never stored
            if etype is None:
                found = lead(raw)
                if found is None:
                    if maybe(raw) is None:
                        continue
                else:
                    name = found.group(1).decode()
                    if name not in wanted and raw.count(b'"type"') == 1:
                        types[i] = name  # no second "type" key could win over it
                        continue
            elif etype not in wanted:
                continue
            etype, record = _typed_record(raw, i, etype, types)
            if etype in wanted:
                yield i + 1, etype, record, None

    def view(self, n: int | None = None) -> EventView:
        return EventView(self, len(self._types) if n is None else n)


class EventView(PrefixView[Event]):
    """The first `n` events of a log, read-only; equal to any sequence of equal events."""

    __slots__ = ("_log",)

    def __init__(self, log: EventLog, n: int) -> None:
        super().__init__(n)
        self._log = log

    def _item(self, i: int) -> Event:
        return self._log._at(i)

    def __iter__(self) -> Iterator[Event]:
        at = self._log._at  # the hot path of folds over a view: no call in between
        for i in range(self._n):
            yield at(i)

    def __repr__(self) -> str:
        return f"EventView({self._n} events)"

    @property
    def log(self) -> EventLog:
        return self._log

    @property
    def types(self) -> Sequence[str]:
        return self._log.types_of(self._n)

    def line(self, i: int) -> bytes:
        return self._log.line(position(i, self._n))

    def lines(self) -> list[bytes]:
        return self._log.lines(self._n)

    def byte_length(self) -> int:
        return self._log.byte_length(self._n)


class _Types(Sequence[str]):
    """The types of a log's first n events, each learnt when first read."""

    __slots__ = ("_log", "_n")

    def __init__(self, log: EventLog, n: int) -> None:
        self._log = log
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._log.type_at(i) for i in range(*index.indices(self._n))]
        return self._log.type_at(position(index, self._n))


#: containers a pause keeps before they count as long-lived with the collector off (a
#: small session's replay stays young; a long one's moves to the oldest generation)
LONG_LIVED = 50_000


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Decoding a log allocates many containers and nothing cyclic; the cyclic collector
    has nothing to find meanwhile, and each of its passes would walk all kept so far.

    What the pause made and kept is long-lived (a log, a transcript): it is moved to the
    oldest generation as it is (a freeze and an unfreeze: two list splices, no walk), so
    that the first allocation after the pause does not start a young collection that
    walks all of it once more (~13 ms after a 100,000-event replay). It stays tracked:
    a full collection still finds any cycle in it. Not done when something froze objects
    on purpose (they would be unfrozen).

    Where the collector is off already (the app runs it from a timer on its GUI thread:
    gui/app/main_thread_gc.py), a pause that kept a log's worth (LONG_LIVED containers or
    more) is moved the same way: the timer's next young collection would walk all of it
    on the GUI thread (27 ms, the window frozen, after a 100,000-event replay)."""
    was_enabled = gc.isenabled()
    made = gc.get_count()[0]
    gc.disable()
    try:
        yield
    finally:
        kept = gc.get_count()[0] - made
        if (was_enabled or kept >= LONG_LIVED) and not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def _typed_record(
    raw: bytes, i: int, known: str | None, types: list[str | None]
) -> tuple[str, dict[str, Any]]:
    """Line i of a log decoded, and its type (`known`, else read off the record and kept
    in `types`). The line was validated at load: one that no longer decodes is corrupt."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise CorruptLog(f"event {i + 1} no longer decodes: {exc}") from exc
    if known is None:
        known = record.get("type")
        if type(known) is not str:
            raise CorruptLog(f"event {i + 1} no longer has a type")
        types[i] = known
    return known, record


@functools.cache
def _type_pattern(wanted: frozenset[str]) -> re.Pattern[bytes]:
    """Finds a backslash or a wanted type as a quoted JSON string: a line without either
    cannot be of a wanted type (without escapes, every string in it is there as it is)."""
    names = sorted(wanted, key=len, reverse=True)
    return re.compile(rb"\\|\"(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\"")


#: the start of a line as the store writes it, `{"seq":N,"type":"T"`; T without escapes
_LEAD = re.compile(rb'\{"seq":[0-9]{1,32},"type":"([^"\\]*)"')


def lead_type(raw: bytes) -> str | None:
    """The first type key of a line that starts as the store writes one,
    `{"seq":N,"type":"T",`, read off those bytes without decoding the line; None when it
    starts otherwise or T holds an escape. (A duplicate "type" key later in the line would
    win when decoded: the caller checks there is none before trusting T.) One regular
    expression match: a scan of a 100,000-line log calls this once a line."""
    found = _LEAD.match(raw)
    return None if found is None else found.group(1).decode()


def event_types(events: Sequence[Event]) -> Sequence[str]:
    """Each event's type, without decoding the events of a lazily decoded log."""
    types = getattr(events, "types", None)
    return types if types is not None else [e.type for e in events]


def last_index_of(events: Sequence[Event], etype: str) -> int | None:
    """The index of the last event of type `etype`, reading as few lines as it can of a
    lazily decoded log (`EventLog.last_index_of`)."""
    if isinstance(events, EventLog):
        return events.last_index_of(etype, len(events))
    if isinstance(events, EventView):
        return events.log.last_index_of(etype, len(events))
    for i in range(len(events) - 1, -1, -1):
        if events[i].type == etype:
            return i
    return None


def head(events: Sequence[Event], n: int) -> Sequence[Event]:
    """The first n events, without decoding those of a lazily decoded log."""
    if isinstance(events, EventLog):
        return events.view(min(n, len(events)))
    if isinstance(events, EventView):
        return EventView(events.log, min(n, len(events)))
    return events[:n]


def event_records(
    events: Sequence[Event], start: int, wanted: frozenset[str], *, skim: bool = True
) -> Iterator[tuple[int, str, Mapping[str, Any], Event | None]]:
    """(seq, type, fields, event) of the events after the first `start` whose type is in
    `wanted`, without building the events of a lazily decoded log (`EventLog.records`)."""
    if isinstance(events, EventView):
        return events.log.records(start, len(events), wanted, skim=skim)
    if isinstance(events, EventLog):
        return events.records(start, len(events), wanted, skim=skim)
    return ((e.seq, e.type, e.fields, e) for e in events[start:] if e.type in wanted)


def event_lines(events: Sequence[Event]) -> Iterator[bytes]:
    """Each event's serialized line, reusing the bytes it was read from."""
    if isinstance(events, EventLog):
        return iter(events.lines(len(events)))
    if isinstance(events, EventView):
        return iter(events.lines())
    return (e.encode() for e in events)


def lines_length(events: Sequence[Event]) -> int:
    """Bytes the events take as lines of a log, one newline each included."""
    if isinstance(events, EventView):
        return events.byte_length()
    return sum(len(line) + 1 for line in event_lines(events))
