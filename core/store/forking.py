"""The fork verbs of `SessionStore` (mixed in: `ForkVerbs`): `fork` branches a loaded
log at an exact boundary; `fork_indexed` branches a session that is not
loaded at the point the backend's index vouches for, its seed read only when someone
reads it (`_UnreadPrefix`; the JSONL backend copies its bytes instead).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, overload

from forkwise.core.errors import DuplicateSessionId
from forkwise.core.log.digest import DIGEST_FIELD, prefix_digest
from forkwise.core.log.events import HISTORY_FORK, Event, now_ts
from forkwise.core.log.ids import validate_session_id
from forkwise.core.log.turns import BracketState, check_boundary
from forkwise.core.store.appending import build_events
from forkwise.core.store.backend import Backend, IndexedFork, Remembered
from forkwise.core.store.fork_point import ForkPoint, anchor_of, fork_point_of
from forkwise.core.store.record import Record
from forkwise.core.store.session import (
    Session,
    SessionCreated,
    SessionHeader,
    SessionSummary,
    StoreEvent,
)

Draft = Mapping[str, Any]


class ForkVerbs:
    """The fork verbs of `SessionStore` (mixed into it): what they need of the store is
    declared here and provided there."""

    backend: Backend
    _lock: threading.RLock
    _records: dict[str, Record]

    # provided by SessionStore
    def exists(self, session_id: str) -> bool:
        raise NotImplementedError

    def get(self, session_id: str) -> Session:
        raise NotImplementedError

    def _persist(self, change: StoreEvent) -> None:
        raise NotImplementedError

    def _announce(self, change: StoreEvent) -> None:
        raise NotImplementedError

    def _writing(
        self, session_id: object, must_exist: bool = True
    ) -> contextlib.AbstractContextManager[Record | None]:
        raise NotImplementedError

    def _recheck(self, session_id: object) -> None:
        raise NotImplementedError

    def _fresh(self, source: Session | str) -> Record:
        raise NotImplementedError

    def _new_id(self, requested: str | None) -> str:
        raise NotImplementedError

    def _commit_create(
        self, header: SessionHeader, seed: Sequence[Event], state: BracketState,
        follow: Sequence[Draft], *, seed_summary: SessionSummary | None = None,
        seed_point: ForkPoint | None = None, copied_from: str | None = None,
    ) -> Session:  # as a fork calls it
        raise NotImplementedError

    def fork(
        self,
        source: Session | str,
        boundary: int | None = None,
        child_id: str | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        follow: Sequence[Draft] = (),
        anchor: Mapping[str, Any] | None = None,
    ) -> Session:
        """Branch `source` at an exact boundary. Nothing is written on failure.

        Holds the source's write lock, so that a change to it in flight on another thread
        is over first (the source's facts and its file are those of one moment)."""
        source_id = source.id if isinstance(source, Session) else source
        with self._writing(source_id, must_exist=False) as _, self._lock:
            self._recheck(source_id)
            rec = self._fresh(source)
            if child_id is not None and self.exists(validate_session_id(child_id)):
                raise DuplicateSessionId(
                    f"a session {child_id!r} exists already", session_id=child_id
                )
            events = rec.events
            b = check_boundary(events, len(events) if boundary is None else boundary)
            seed = events.view(b)
            child = self._new_id(child_id)
            header = SessionHeader(
                id=child,
                created=now_ts(),
                cwd=rec.header.cwd,
                parent_session=rec.header.id,
                seed_length=b,
                meta=MappingProxyType(dict(meta or {})),
            )
            fork_event: dict[str, Any] = {
                "type": HISTORY_FORK,
                "source": rec.header.id,
                "boundary": b,
            }
            fork_event.update(anchor if anchor is not None else anchor_of(seed))
            # what the child copied, so a later rewrite of the source below b shows
            fork_event[DIGEST_FIELD] = prefix_digest(seed)
            if header.meta.get("relation"):
                fork_event["relation"] = header.meta["relation"]
            point = rec.point if rec.point is not None and rec.point.seq <= b else None
            if b < len(events):
                state, seed_summary = BracketState.closed_at(seed), None
                # a summary of the seed would decode it all; so does this, at most
                point = fork_point_of(seed, point, decode=True)
            else:  # the whole log: reuse what is known about it instead of a second pass
                state, seed_summary = rec.state.copy(), rec.summary
            return self._commit_create(
                header,
                seed,
                state,
                [fork_event, *follow],
                seed_summary=seed_summary,
                seed_point=point,
                copied_from=rec.header.id,
            )

    def fork_indexed(
        self,
        source: str,
        child_id: str | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        follow: Callable[[SessionSummary], Sequence[Draft]] = lambda _summary: (),
    ) -> SessionSummary | None:
        """Fork through the last completed turn of a session that is not loaded, from what
        the backend's index vouches for (`Backend.indexed_fork`), without reading its log;
        the child's summary. None when the index cannot vouch, or the log ends in a turn a
        crash left open (its host closes it first): then fork the log with `fork`.

        The child is made from those facts exactly as `fork` would make it from the log;
        `follow(the source's whole-log summary)` gives the drafts after its `history/fork`.
        The copy and its flush happen under the store lock (nothing else may load the
        source meanwhile)."""
        with self._lock:
            sid = validate_session_id(source)
            indexed = None if sid in self._records else self.backend.indexed_fork(sid)
            if indexed is None or (indexed.summary.running and not indexed.waits):
                return None
            return self._fork_indexed(indexed, child_id, meta, follow(indexed.summary))

    def _fork_indexed(
        self,
        indexed: IndexedFork,
        child_id: str | None,
        meta: Mapping[str, Any] | None,
        drafts: Sequence[Draft],
    ) -> SessionSummary:
        """`fork` at the point the index gives, under the store lock; nothing of the
        source is loaded (another thread's change to it would load it first)."""
        source, point = indexed.header, indexed.point
        child = self._new_id(child_id)
        header = SessionHeader(
            id=child,
            created=now_ts(),
            cwd=source.cwd,
            parent_session=source.id,
            seed_length=point.seq,
            meta=MappingProxyType(dict(meta or {})),
        )
        fork_event: dict[str, Any] = {
            "type": HISTORY_FORK,
            "source": source.id,
            "boundary": point.seq,
            **point.anchor(),
        }
        if indexed.digest is not None:
            fork_event[DIGEST_FIELD] = indexed.digest
        if header.meta.get("relation"):
            fork_event["relation"] = header.meta["relation"]
        follow = build_events([fork_event, *drafts], point.seq)
        seed = _UnreadPrefix(self, source.id, point.seq)
        change = SessionCreated(header, seed, follow, source.id, indexed.span)
        self._persist(change)
        summary = point.summary(header).fold(follow)
        state = BracketState(point.seq + len(follow))  # closed; only its facts are kept
        self.backend.save_summaries([Remembered(summary, state, point, ())])
        self._announce(change)
        return summary



class _UnreadPrefix(Sequence[Event]):
    """The first n events of a session the store has not read (a fork's seed made from
    the index): read from the store when someone reads them. The JSONL backend copies
    their bytes instead."""

    def __init__(self, store: ForkVerbs, session_id: str, n: int) -> None:
        self._store = store
        self._id = session_id
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        events = self._store.get(self._id).events
        if isinstance(index, slice):
            return tuple(events[i] for i in range(*index.indices(self._n)))
        return events[range(self._n)[index]]

