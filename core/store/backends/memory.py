"""In-memory persistence: the reference backend the JSONL one is tested against."""

from __future__ import annotations

from collections.abc import Sequence

from forkwise.core.errors import DuplicateSessionId, ForkwiseError
from forkwise.core.log.events import Event, now_ts
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import (
    IndexedFork,
    LoadedLog,
    Progress,
    Remembered,
    TrashedSession,
)
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
        #: when each session in `_trash` was deleted
        self._deleted: dict[str, str] = {}

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
            self._deleted[change.session_id] = now_ts()
        elif isinstance(change, SessionFlushed):
            pass
        else:  # pragma: no cover - the union is closed
            raise ForkwiseError(f"unknown store change {change!r}")

    def restore(self, session_id: str) -> bool:
        if session_id in self._logs:
            raise DuplicateSessionId(f"a session {session_id!r} exists already",
                                     session_id=session_id)
        found = self._trash.pop(session_id, None)
        self._deleted.pop(session_id, None)
        if found is None:
            return False
        self._logs[session_id] = found
        return True

    def trashed(self) -> list[TrashedSession]:
        found = [
            TrashedSession(sid, self._deleted.get(sid, ""),
                           SessionSummary.start(header).fold(events))
            for sid, (header, events) in self._trash.items()
        ]
        return sorted(found, key=lambda t: t.deleted, reverse=True)

    def empty_trash(self, session_id: str | None = None) -> list[str]:
        gone = sorted(self._trash) if session_id is None else (
            [session_id] if session_id in self._trash else [])
        for sid in gone:
            del self._trash[sid]
            self._deleted.pop(sid, None)
        return gone

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
