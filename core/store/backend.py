"""The persistence interface of the store and the data it exchanges with a backend.

Each backend (memory, JSON Lines, …) depends on this module only, never on the store, so
adding one touches nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from forkwise.core.log.events import Event
from forkwise.core.log.turns import BracketState
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import (
    EventsAppended,
    SessionHeader,
    SessionSummary,
    StoreEvent,
)

Progress = Callable[[int, int], None]


@dataclass
class LoadedLog:
    """What a backend read for one session."""

    header: SessionHeader
    #: an EventLog when the backend validated lines without building every event
    events: Sequence[Event]
    state: BracketState
    torn_tail: bytes | None = None
    #: the summary, when the backend computed it while it read the log
    summary: SessionSummary | None = None
    #: the point of a completed turn of the log, when the backend knows one
    point: ForkPoint | None = None


class Remembered(NamedTuple):
    """What the store knows of a session it has loaded, for the backend's index."""

    summary: SessionSummary
    state: BracketState
    #: the point of the log's last completed turn, if known
    point: ForkPoint | None
    events: Sequence[Event]


@dataclass(frozen=True, slots=True)
class IndexedFork:
    """What a backend's index vouches for about a log it has not read: its header, the
    point of its last completed turn, and where the lines through it stand in its file
    (`span`: start and end offsets), for a backend that copies them."""

    header: SessionHeader
    point: ForkPoint
    span: tuple[int, int]
    #: the summary of the whole log (its latest model is what a child is given)
    summary: SessionSummary
    #: whether a turn left open at the end of the log waits for an approval (it stays
    #: open; any other open turn was left by a crash and is closed before a fork)
    waits: bool = False
    #: the digest of the lines in `span` (`forkwise.core.log.digest`), when the backend
    #: could hash them; the child records it in its `history/fork`
    digest: str | None = None


@dataclass(frozen=True)
class TrashedSession:
    """A deleted session the backend keeps (its latest copy, when it was deleted twice)."""

    session_id: str
    #: when it was deleted, in the log's time format
    deleted: str
    #: what its log says; None when the kept copy cannot be read
    summary: SessionSummary | None


@runtime_checkable
class Restorable(Protocol):
    """A backend that keeps what is deleted and can bring it back (Undo of a delete),
    list it (the Trash) and let it go for good (Empty)."""

    def restore(self, session_id: str) -> bool:
        """Put the latest deleted copy of a session back; False when there is none.
        Raises DuplicateSessionId when a session of that id exists."""
        ...

    def trashed(self) -> list[TrashedSession]:
        """The deleted sessions kept, the latest deleted first."""
        ...

    def empty_trash(self, session_id: str | None = None) -> list[str]:
        """Remove every kept copy of `session_id` (of every deleted session when None)
        for good; the ids removed."""
        ...


@runtime_checkable
class HoldsIndex(Protocol):
    """A backend whose index of summaries may be saved once for many changes (an import
    of many sessions) instead of at each one."""

    def index_held(self) -> AbstractContextManager[None]:
        """While entered, what the index learns is kept and saved once, on exit."""
        ...


@runtime_checkable
class WritesAtOnce(Protocol):
    """A backend whose append can be written at once, where waiting is not allowed (an
    event loop), and made durable later by `persist(SessionFlushed)` on another thread."""

    def write_now(self, change: EventsAppended) -> bool:
        """Write `change` when that is only a write into the page cache; False: nothing
        was written (it needs more: opening, cutting or naming files), `persist` it.
        Raises as `persist` does, leaving the file as it was."""
        ...


@runtime_checkable
class SharedWriters(Protocol):
    """A backend several hosts write at once, one writer per session (a database): who
    writes a session is known per session, not for the whole store."""

    def claim(self, session_id: str) -> None:
        """Become the session's writer now, or raise SessionBusy (another host is)."""
        ...

    def unheld(self, session_ids: Sequence[str]) -> set[str]:
        """Of `session_ids`, those no host is the writer of (this one neither): an open
        turn there was left by a crash, not run by a live host."""
        ...


class Backend(Protocol):
    """Persistence for a store. `persist` raises a ForkwiseError and leaves the disk as it
    was when it cannot complete a change.

    A backend that names the sessions created with `name_later` at some later call
    (`persist` of any change, or `load`) does so before that call's own work: when some of
    them cannot be named, it forgets them, leaves nothing of them on disk and raises a
    StorageError whose `lost` detail lists them, without having made the change; the store
    may then make it again."""

    writable: bool

    def persist(self, change: StoreEvent) -> None: ...
    def exists(self, session_id: str) -> bool: ...
    def session_ids(self) -> list[str]: ...
    def load(self, session_id: str) -> LoadedLog | None: ...
    def summaries(
        self, skip: set[str], progress: Progress | None = None
    ) -> list[SessionSummary]: ...
    def save_summaries(self, records: Sequence[Remembered]) -> None: ...
    def forget(self, session_id: str) -> None:
        """Drop what an index knows of a session whose stored form went (not by this
        backend: its own deletes do this themselves)."""
        ...

    def unchanged(self, session_id: str) -> bool:
        """Whether the session's stored form is still as this backend last read or wrote
        it (False: something else changed it, and what the store holds may be stale)."""
        ...

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        """The facts for a fork at the last completed turn of a session that is not
        loaded, when an index the backend trusts has them; None sends the store to the
        log itself."""
        ...

    def close(self) -> None: ...
