"""In-memory persistence: the reference backend the JSONL one is tested against."""

from __future__ import annotations

from collections.abc import Sequence

from forkwise.core.errors import DuplicateSessionId, ForkwiseError
from forkwise.core.log.events import Event
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import IndexedFork, LoadedLog, Progress, Remembered
from forkwise.core.store.session import (
    EventsAppended,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionHeader,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)


class MemoryBackend:
    writable = True

    def __init__(self) -> None:
        self._logs: dict[str, tuple[SessionHeader, list[Event]]] = {}
        self._trash: dict[str, tuple[SessionHeader, list[Event]]] = {}

    def persist(self, change: StoreEvent) -> None:
        if isinstance(change, SessionCreated):
            self._logs[change.header.id] = (change.header, [*change.seed, *change.events])
        elif isinstance(change, EventsAppended):
            self._logs[change.session_id][1].extend(change.events)
        elif isinstance(change, SessionTruncated):
            header, _ = self._logs[change.session_id]
            self._logs[change.session_id] = (change.header or header, list(change.kept))
        elif isinstance(change, SessionDisposed):
            self._trash[change.session_id] = self._logs.pop(change.session_id)
        elif isinstance(change, SessionFlushed):
            pass
        else:  # pragma: no cover - the union is closed
            raise ForkwiseError(f"unknown store change {change!r}")

    def restore(self, session_id: str) -> bool:
        if session_id in self._logs:
            raise DuplicateSessionId(f"a session {session_id!r} exists already",
                                     session_id=session_id)
        found = self._trash.pop(session_id, None)
        if found is None:
            return False
        self._logs[session_id] = found
        return True

    def exists(self, session_id: str) -> bool:
        return session_id in self._logs

    def session_ids(self) -> list[str]:
        return list(self._logs)

    def load(self, session_id: str) -> LoadedLog | None:
        found = self._logs.get(session_id)
        if found is None:
            return None
        header, events = found
        return LoadedLog(header, list(events), BracketState().feed_all(events))

    def summaries(self, skip: set[str], progress: Progress | None = None) -> list[SessionSummary]:
        return [
            SessionSummary.start(header).fold(events)
            for sid, (header, events) in self._logs.items()
            if sid not in skip
        ]

    def save_summaries(self, records: Sequence[Remembered]) -> None:
        pass

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        return None  # no index: a fork reads the log, which costs nothing here

    def forget(self, session_id: str) -> None:
        pass  # no index

    def unchanged(self, session_id: str) -> bool:
        return True  # nothing but this backend reaches its memory

    def close(self) -> None:
        pass
