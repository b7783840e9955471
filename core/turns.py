"""Turn brackets: the rules that say where a log may be cut.

Pure functions over a sequence of events whose seq numbers are 1..n (event i has seq i+1).
The store's fork uses `check_boundary` (an exact, inclusive boundary); the host's fork uses
`resolve_anchor` (an anchor inside the wanted turn); both agree on what an open turn is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .errors import (
    BoundaryInOpenTurn,
    ForkUnavailable,
    InvalidBoundary,
    InvalidEvent,
    MessageNotFound,
)
from .events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    MESSAGE,
    TURN_END,
    TURN_SCOPED,
    TURN_START,
    Event,
)


@dataclass
class BracketState:
    """Incremental checker for the bracket rules, fed one event at a time.

    Used for appends (raising InvalidEvent) and when a log is loaded (the loader turns the
    error into CorruptLog with the line number).
    """

    last_seq: int = 0
    open_turn: str | None = None
    open_turn_seq: int = 0
    message_ids: set[str] = field(default_factory=set)
    pending_approvals: dict[str, int] = field(default_factory=dict)

    def feed(self, event: Event) -> None:
        if event.seq != self.last_seq + 1:
            raise InvalidEvent(
                f"seq {event.seq} follows {self.last_seq}: seq numbers must be contiguous"
            )
        etype = event.type
        if etype == TURN_START:
            if self.open_turn is not None:
                raise InvalidEvent(
                    f"event {event.seq}: turn/start while turn {self.open_turn} is open"
                )
            self.open_turn = event.get("turn")
            self.open_turn_seq = event.seq
        elif etype == TURN_END or etype in TURN_SCOPED:
            if self.open_turn is None:
                raise InvalidEvent(f"event {event.seq}: {etype} outside a turn")
            if event.get("turn") != self.open_turn:
                raise InvalidEvent(
                    f"event {event.seq}: {etype} names turn {event.get('turn')!r}, "
                    f"but the open turn is {self.open_turn!r}"
                )
            if etype == TURN_END:
                self.open_turn = None
                self.pending_approvals.clear()
            elif etype == MESSAGE:
                mid = event.get("id")
                if mid in self.message_ids:
                    raise InvalidEvent(f"event {event.seq}: duplicate message id {mid!r}")
                self.message_ids.add(mid)
            elif etype == APPROVAL_REQUEST:
                self.pending_approvals[event.get("approval")] = event.seq
            elif etype == APPROVAL_RESOLVE:
                self.pending_approvals.pop(event.get("approval"), None)
        self.last_seq = event.seq

    def feed_all(self, events: Iterable[Event]) -> BracketState:
        for event in events:
            self.feed(event)
        return self


def open_turn_start(events: Sequence[Event], boundary: int) -> int | None:
    """Seq of the turn/start left open by the prefix through `boundary`, or None."""
    for i in range(boundary - 1, -1, -1):
        etype = events[i].type
        if etype == TURN_END:
            return None
        if etype == TURN_START:
            return events[i].seq
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
    for i in range(len(events) - 1, -1, -1):
        if events[i].type == TURN_END:
            return events[i].seq
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
    for i in range(at_seq - 1, last):
        if events[i].type == TURN_END:
            return events[i].seq
    raise ForkUnavailable(
        f"the turn at seq {at_seq} has not finished yet", session_id=session_id, atSeq=at_seq
    )


def find_message(events: Sequence[Event], message_id: str) -> Event:
    for event in events:
        if event.type == MESSAGE and event.get("id") == message_id:
            return event
    raise MessageNotFound(f"no message {message_id!r} in this session", message_id=message_id)


def opens_its_turn(events: Sequence[Event], message: Event) -> int | None:
    """If `message` is the first message of its turn, the seq of that turn/start."""
    for i in range(message.seq - 2, -1, -1):
        etype = events[i].type
        if etype == MESSAGE:
            return None
        if etype == TURN_START:
            return events[i].seq
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
