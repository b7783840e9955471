"""The drafts that open a step, held back so that they share the step's durable write.

A turn opens with `turn/start`, the prompt and its first `step/start`; a later step with
its own `step/start`. Written on their own, they cost a write and a flush before the model
is even asked. Held back instead, they go to the log in the same write as what the step
produced when the model has its result at once (the offline model: a plain turn is one
write and one flush), and on their own as soon as the step has to wait for anything (a
network model: they are flushed while the request is on its way). Any other store call
of the agent writes them first, so the agent never reads a log that lacks them, and so
does a read of the session through the host (`Agent.written`).

Nothing about held drafts reaches a client before they are durable: the store announces
events only after their flush, and an outcome is settled only after the write that ends
the turn. Streamed text (`session/delta`, not an event: it is never durable before the
step's message is) is held with them (`tell`), as the DeltaStream coalesced it, so that a
client sees the turn's prompt before its reply streams in: it goes out right after the
opening is told when that is written on its own, or right before the write that carries
the opening with the step's result (and the whole text).

The agent's replay folds held drafts at once, as the events they will be (`hold`); the
write that carries them says whether they got the seqs the replay gave them (`landed`),
else the agent replays the log again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from forkwise.core.log.events import Event
from forkwise.core.notifications import Notification

Json = dict[str, Any]
Write = Callable[[list[Json], tuple[Event, ...]], Awaitable[object]]


class HeldDrafts:
    """Drafts kept back until the next write of the session, or until the step waits.

    One per live session, used on its event loop only.
    """

    def __init__(self) -> None:
        self._drafts: list[Json] = []
        self._events: tuple[Event, ...] = ()
        #: held drafts being written on their own (the step had to wait)
        self._writing: asyncio.Task[object] | None = None
        #: notes held until the opening is told (`tell`), and whether they are
        self._notes: list[Notification] = []
        self._holding_notes = False

    @property
    def pending(self) -> bool:
        """Drafts are held, or being written on their own."""
        return bool(self._drafts) or self._writing is not None

    def hold(self, drafts: Sequence[Mapping[str, Any]], last_seq: int) -> tuple[Event, ...]:
        """Keep `drafts` back; returns them as the events they will be in a log whose last
        event is `last_seq`, for the replay (the store checks, stamps and encodes them when
        it writes them)."""
        after = self._events[-1].seq if self._events else last_seq
        # no time: the replay reads none, and the write stamps its own
        events = tuple(
            Event(seq, d["type"], "", MappingProxyType({k: v for k, v in d.items() if k != "type"}))
            for seq, d in enumerate(drafts, start=after + 1)
        )
        self._drafts.extend(dict(d) for d in drafts)
        self._events += events
        self._holding_notes = True
        return events

    def tell(self, note: Notification, notify: Callable[[Notification], None]) -> None:
        """`notify(note)` now, or once the held drafts are told (`release`)."""
        if self._holding_notes:
            self._notes.append(note)
        else:
            notify(note)

    def release(self, notify: Callable[[Notification], None]) -> None:
        """Send the notes held by `tell`, in order; later ones go out as they come."""
        notes, self._notes = self._notes, []
        self._holding_notes = False
        for note in notes:
            notify(note)

    def take(self) -> tuple[list[Json], tuple[Event, ...]]:
        """The held drafts and their events, for a write that carries them (no longer held)."""
        drafts, events = self._drafts, self._events
        self._drafts, self._events = [], ()
        return drafts, events

    def write_when_waiting(self, write: Write) -> asyncio.Handle | None:
        """Arrange for the held drafts to be written on their own (`write(drafts, events)`)
        on the loop's next turn; the caller cancels the handle when its step has its result
        before then. None when nothing is held."""
        if not self._drafts:
            return None
        return asyncio.get_running_loop().call_soon(self._start, write)

    async def written(self, write: Write) -> None:
        """Write the held drafts now (and wait for drafts being written): for a reader of
        the log, which must see what the session's running step holds back. What such a
        write raises is left for the session's own next write (`settle`)."""
        self._start(write)
        task = self._writing
        if task is not None:
            await asyncio.wait([task])

    def _start(self, write: Write) -> None:
        if not self._drafts or self._writing is not None:
            return  # nothing left, or a write in flight: they go with the next write
        drafts, events = self.take()
        task = asyncio.get_running_loop().create_task(_awaited(write(drafts, events)))
        task.add_done_callback(_retrieve)
        self._writing = task

    async def settle(self) -> None:
        """Wait for held drafts being written on their own; raises what that write raised.
        A caller cancelled meanwhile does not cancel the write."""
        task = self._writing
        if task is None:
            return
        try:
            await asyncio.shield(task)
        finally:
            if task.done():
                self._writing = None


async def _awaited(work: Awaitable[object]) -> object:
    return await work


def _retrieve(task: asyncio.Task[object]) -> None:
    """Mark a failed write's error as seen: whoever settles next raises it."""
    if not task.cancelled():
        task.exception()


def landed(events: Sequence[Event], held: Sequence[Event]) -> bool:
    """Whether the held events are in the log `events` at the seqs they were given (another
    write to the session may have come first)."""
    for event in held:
        if event.seq > len(events):
            return False
        found = events[event.seq - 1]
        if found.type != event.type or found.fields != event.fields:
            return False
    return True
