"""Turn brackets: the rules that say where a log may be cut.

Pure functions over a sequence of events whose seq numbers are 1..n (event i has seq i+1).
The store's fork uses `check_boundary` (an exact, inclusive boundary); the host's fork uses
`resolve_anchor` (an anchor inside the wanted turn); both agree on what an open turn is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from forkwise.core.errors import (
    BoundaryInOpenTurn,
    ForkUnavailable,
    InvalidBoundary,
    InvalidEvent,
    MessageNotFound,
)
from forkwise.core.log.event_log import event_records, event_types, gc_paused
from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    MESSAGE,
    TURN_END,
    TURN_SCOPED,
    TURN_START,
    Event,
)

_MESSAGES = frozenset({MESSAGE})


class _Fields(Protocol):
    def get(self, key: str, default: Any = None, /) -> Any: ...


def written_by_agent(event: _Fields) -> bool:
    """An event an agent's own file gave (an import keeps where it came from in `src`). A
    turn holding one is that agent's to run and end: neither the host nor the app cancels
    it or writes into it."""
    return event.get("src") is not None


class BracketState:
    """Incremental checker for the bracket rules, fed one event at a time.

    Used for appends (raising InvalidEvent) and when a log is loaded (the loader turns the
    error into CorruptLog with the line number). The set of message ids may be left to be
    gathered from the log the first time it is needed (`closed_at`), so that a fork of a
    long log does not decode every event of its seed.
    """

    __slots__ = ("_ids", "_ids_of", "last_seq", "open_turn", "open_turn_seq", "pending_approvals")

    def __init__(
        self,
        last_seq: int = 0,
        open_turn: str | None = None,
        open_turn_seq: int = 0,
        message_ids: set[str] | None = None,
        pending_approvals: dict[str, int] | None = None,
    ) -> None:
        self.last_seq = last_seq
        self.open_turn = open_turn
        self.open_turn_seq = open_turn_seq
        self.pending_approvals = pending_approvals if pending_approvals is not None else {}
        self._ids = message_ids if message_ids is not None else set()
        self._ids_of: Sequence[Event] | None = None

    @classmethod
    def closed_at(cls, events: Sequence[Event]) -> BracketState:
        """The state after `events`, a prefix that ends outside any turn (a checked fork
        boundary): nothing is open, and the message ids are read from it when needed."""
        return cls.restore(events, None, 0, {})

    @classmethod
    def restore(
        cls,
        events: Sequence[Event],
        open_turn: str | None,
        open_turn_seq: int,
        pending_approvals: dict[str, int],
    ) -> BracketState:
        """The state after `events` as it was recorded (the index keeps it for each checked
        log); the message ids are read from the log when first needed."""
        state = cls(len(events), open_turn, open_turn_seq, None, pending_approvals)
        state._ids_of = events
        return state

    @property
    def message_ids(self) -> set[str]:
        if self._ids_of is not None:
            events, self._ids_of = self._ids_of, None
            # each message line decoded and dropped: building 30,000 events to read their
            # ids made the first write to a long session opened from the index take ~0.4 s
            with gc_paused():
                found = event_records(events, 0, _MESSAGES)
                self._ids = {fields["id"] for _, _, fields, _ in found}
        return self._ids

    def adopt_message_ids(self, ids: set[str]) -> None:
        """Take `ids` as the message ids of the log this state is of, when they are still
        to be gathered from it: what a replay of the same log found (a copy is kept)."""
        if self._ids_of is not None and len(self._ids_of) == self.last_seq:
            self._ids, self._ids_of = set(ids), None

    def copy(self) -> BracketState:
        out = BracketState(
            self.last_seq,
            self.open_turn,
            self.open_turn_seq,
            set(self._ids),
            dict(self.pending_approvals),
        )
        out._ids_of = self._ids_of
        return out

    def feed(self, event: Event) -> None:
        self.step(event.seq, event.type, event.fields)

    def step(self, seq: int, etype: str, fields: Mapping[str, Any]) -> None:
        """Feed one event given as its parts (the loader checks lines without building
        events)."""
        if seq != self.last_seq + 1:
            raise InvalidEvent(f"seq {seq} follows {self.last_seq}: seq numbers must be contiguous")
        if etype == TURN_START:
            if self.open_turn is not None:
                raise InvalidEvent(f"event {seq}: turn/start while turn {self.open_turn} is open")
            self.open_turn = fields["turn"]
            self.open_turn_seq = seq
        elif etype == TURN_END or etype in TURN_SCOPED:
            if self.open_turn is None:
                raise InvalidEvent(f"event {seq}: {etype} outside a turn")
            if fields.get("turn") != self.open_turn:
                raise InvalidEvent(
                    f"event {seq}: {etype} names turn {fields.get('turn')!r}, "
                    f"but the open turn is {self.open_turn!r}"
                )
            if etype == TURN_END:
                self.open_turn = None
                self.pending_approvals.clear()
            elif etype == MESSAGE:
                mid = fields["id"]
                ids = self._ids if self._ids_of is None else self.message_ids
                if mid in ids:
                    raise InvalidEvent(f"event {seq}: duplicate message id {mid!r}")
                ids.add(mid)
            elif etype == APPROVAL_REQUEST:
                self.pending_approvals[fields["approval"]] = seq
            elif etype == APPROVAL_RESOLVE:
                self.pending_approvals.pop(fields["approval"], None)
        self.last_seq = seq

    def feed_all(self, events: Iterable[Event]) -> BracketState:
        for event in events:
            self.feed(event)
        return self


def open_turn_start(events: Sequence[Event], boundary: int) -> int | None:
    """Seq of the turn/start left open by the prefix through `boundary`, or None."""
    types = event_types(events)
    for i in range(boundary - 1, -1, -1):
        etype = types[i]
        if etype == TURN_END:
            return None
        if etype == TURN_START:
            return i + 1
    return None


def check_boundary(events: Sequence[Event], boundary: object) -> int:
    """Validate an exact store boundary (0 ≤ b ≤ last seq, not inside an open turn)."""
    last = len(events)
    if not isinstance(boundary, int) or isinstance(boundary, bool):
        raise InvalidBoundary(
            f"boundary must be an integer, got {boundary!r}", boundary=repr(boundary)
        )
    if boundary < 0 or boundary > last:
        raise InvalidBoundary(
            f"boundary {boundary} is outside 0..{last}", boundary=boundary, last_seq=last
        )
    start = open_turn_start(events, boundary)
    if start is not None:
        raise BoundaryInOpenTurn(
            f"boundary {boundary} is inside the turn opened at seq {start}",
            boundary=boundary,
            turn_start=start,
        )
    return boundary


def last_completed_turn(events: Sequence[Event]) -> int | None:
    """Seq of the last turn/end (any status closes a turn), or None."""
    types = event_types(events)
    for i in range(len(types) - 1, -1, -1):
        if types[i] == TURN_END:
            return i + 1
    return None


def resolve_anchor(events: Sequence[Event], at_seq: object, session_id: str) -> int:
    """The host's fork rule: the first turn/end at or after the anchor.

    Omitted or past the end → the last completed turn. An anchor in the log with no turn/end
    after it → ForkUnavailable; there is never a fall back to an earlier turn.
    """
    last = len(events)
    if at_seq is not None and (
        not isinstance(at_seq, int) or isinstance(at_seq, bool) or at_seq < 1
    ):
        raise InvalidBoundary(
            f"atSeq must be a positive integer, got {at_seq!r}", atSeq=repr(at_seq)
        )
    if at_seq is None or at_seq > last:
        found = last_completed_turn(events)
        if found is None:
            raise ForkUnavailable(
                "this session has no completed turn to fork from", session_id=session_id
            )
        return found
    types = event_types(events)
    for i in range(at_seq - 1, last):
        if types[i] == TURN_END:
            return i + 1
    raise ForkUnavailable(
        f"the turn at seq {at_seq} has not finished yet", session_id=session_id, atSeq=at_seq
    )


def find_message(events: Sequence[Event], message_id: str) -> Event:
    for i, etype in enumerate(event_types(events)):
        if etype == MESSAGE and events[i].get("id") == message_id:
            return events[i]
    raise MessageNotFound(f"no message {message_id!r} in this session", message_id=message_id)


def opens_its_turn(events: Sequence[Event], message: Event) -> int | None:
    """If `message` is the first message of its turn, the seq of that turn/start."""
    types = event_types(events)
    for i in range(message.seq - 2, -1, -1):
        etype = types[i]
        if etype == MESSAGE:
            return None
        if etype == TURN_START:
            return i + 1
    return None


def message_boundary(
    events: Sequence[Event], message_id: str, include_message: bool, session_id: str
) -> int:
    """The boundary for a fork at a message (seed 002).

    include_message=True: through the end of the message's turn (the anchor rule).
    include_message=False: through the event before the turn the message opens.
    """
    message = find_message(events, message_id)
    if include_message:
        return resolve_anchor(events, message.seq, session_id)
    start = opens_its_turn(events, message)
    if start is None:
        raise BoundaryInOpenTurn(
            f"message {message_id!r} does not open its turn, so it cannot be excluded",
            message_id=message_id,
        )
    return start - 1


def subagent_boundary(events: Sequence[Event]) -> int:
    """Clip for a subagent started while the parent turn is open: the last safe prefix."""
    start = open_turn_start(events, len(events))
    return len(events) if start is None else start - 1
