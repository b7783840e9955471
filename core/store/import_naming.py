"""The store's side of an import's late naming: the records it adopts, and the sessions lost.

An import adopts many sessions at once (`SessionStore.import_records`). Made with
`name_later`, each is written at once under a temporary name and named once its own fsync
is over (`unnamed.py`), at its `flush` — or earlier, since a backend names an import's
files before any other change or load. When some cannot get their names, the backend
raises a StorageError listing them (`lost`) without making the change (`Backend`). Those
sessions are not on disk: whichever store call found them, they are dropped from the
store's memory here and kept with why, for their `flush` to report them failed; a change
to another session is then made as if nothing had happened.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import orjson

from forkwise.core.errors import StorageError
from forkwise.core.log.event_log import EventLog
from forkwise.core.log.events import Event
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import Backend, LoadedLog
from forkwise.core.store.checked_log import check_records
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import SessionCreated, SessionHeader, SessionSummary, StoreEvent

log = logging.getLogger(__name__)


class Imported(NamedTuple):
    """An imported session, checked: the change that creates it and what the store keeps."""

    change: SessionCreated
    events: EventLog
    state: BracketState
    summary: SessionSummary
    point: ForkPoint | None


def imported(
    header: SessionHeader,
    records: Iterable[dict[str, Any]],
    name_later: bool,
    seed_by_reference: bool = False,
    seed_of: EventLog | None = None,
) -> Imported:
    """`records` checked as the loader checks a file's lines (`check_records`) and encoded
    once; what stays in memory is their lines, decoded when read. `seed_by_reference`:
    the seed is the parent's first events (a branch of an imported file), and the backend
    may store it by reference to them; `seed_of`, the parent's log: a seed equal to its
    first lines is kept as those lines (the branches of a file rewound 1,500 times each
    held a copy of the turns they share: 4 GB)."""
    return adopted(check_records(header, records), name_later, seed_by_reference, seed_of)


def adopted(
    checked: LoadedLog,
    name_later: bool,
    seed_by_reference: bool = False,
    seed_of: EventLog | None = None,
) -> Imported:
    """A session `check_records` checked (in this process or in another one: an import
    reads and checks files in worker processes) as the store adopts it (`imported`)."""
    header = checked.header
    lines = checked.events
    assert isinstance(lines, EventLog)  # check_records keeps lines, not events
    assert checked.summary is not None
    n = header.seed_length
    if seed_of is not None and 0 < n <= len(seed_of):
        mine = lines.lines(len(lines))
        theirs = seed_of.lines(n)
        if mine[:n] == theirs:
            lines = EventLog.lazy([*theirs, *mine[n:]], list(lines.types))
    # the seed's lines and the rest as they are; of a fork, its own part decoded for the
    # change (subscribers index it) but not kept: the log keeps lines
    seed, rest = (lines.view(n), _decoded(lines.lines(len(lines))[n:])) if n else ((), lines.view())
    seed_in = header.parent_session if seed_by_reference and n else None
    change = SessionCreated(header, seed, rest, name_later=name_later, seed_in=seed_in)
    return Imported(change, lines, checked.state, checked.summary, checked.point)


class ImportNaming:
    """The backend calls that may find an import's files unnamed, and the sessions lost so
    far, with why, until their `flush` reports them (`lost`)."""

    def __init__(
        self, backend: Backend, lock: threading.RLock, drop: Callable[[str], None]
    ) -> None:
        self._backend = backend
        #: the store's lock
        self._lock = lock
        #: drops a session from the store's memory (called under the store's lock)
        self._drop = drop
        #: sessions an import created (`name_later`) whose files never got their names,
        #: with why: no longer in the store, reported failed at their `flush`
        self.lost: dict[str, StorageError] = {}

    def persist(self, change: StoreEvent) -> None:
        """`backend.persist`, for every change of the store: made again once the sessions
        the backend found lost are dropped, unless the change concerns one of them."""
        try:
            self._backend.persist(change)
        except StorageError as exc:
            lost = self._forget_lost(exc)
            if not lost or _concerns(change) & lost:
                raise
            self._backend.persist(change)
        if isinstance(change, SessionCreated):
            with self._lock:
                self.lost.pop(change.session_id, None)  # made again: not lost any more

    def load(self, session_id: str) -> LoadedLog | None:
        """`backend.load`, whose loading of a file not named yet names them all (see
        `persist` for when that fails)."""
        try:
            return self._backend.load(session_id)
        except StorageError as exc:
            lost = self._forget_lost(exc)
            if not lost or session_id in lost:
                raise
            return self._backend.load(session_id)

    def _forget_lost(self, exc: StorageError) -> set[str]:
        """Drop from memory the sessions `exc` says are not on disk (`lost`) and keep why
        for their `flush`; returns them (none: `exc` is another failure)."""
        lost = set(exc.details.get("lost", ()))
        if lost:
            with self._lock:
                for sid in lost:
                    log.warning("session %s is not in the store: %s", sid, exc.message)
                    self._drop(sid)
                    self.lost[sid] = exc
        return lost


def _concerns(change: StoreEvent) -> set[str]:
    """The sessions a change reads or writes."""
    if isinstance(change, SessionCreated) and change.copied_from is not None:
        return {change.session_id, change.copied_from}
    return {change.session_id}


def _decoded(lines: Sequence[bytes]) -> tuple[Event, ...]:
    """Events of checked lines, built without being kept by the log they come from."""
    loads = orjson.loads
    return tuple(Event.from_decoded(loads(line), line) for line in lines)
