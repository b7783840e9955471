"""SessionStore: the one write path for every session.

Every change is announced as a plain-Python store event (`session/created`, `session/event`,
`session/flush`, `session/truncate`, `session/disposed`). The persistence backend handles
each change first — if it raises, nothing changes in memory and nothing is announced — then
the change is committed and the subscribers (catalogue, host, GUI bridges) are told.
Appends, in one shape or three phases, are `appending.py`'s (mixed in: `AppendPhases`);
forks are `forking.py`'s (mixed in: `ForkVerbs`).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from forkwise.core.errors import (
    DuplicateSessionId,
    ForkwiseError,
    ReadOnlyStore,
    SourceNotFound,
    StaleSession,
    StorageError,
)
from forkwise.core.log.event_log import EventLog, EventView
from forkwise.core.log.events import Event, now_ts
from forkwise.core.log.ids import new_session_id, random_hex, validate_session_id
from forkwise.core.log.text import check_text
from forkwise.core.log.turns import BracketState, check_boundary
from forkwise.core.store.appending import AppendPhases, build_events, feed_atomically
from forkwise.core.store.backend import (
    Backend,
    HoldsIndex,
    LoadedLog,
    Progress,
    Remembered,
    Restorable,
    SharedWriters,
    TrashedSession,
    WritesAtOnce,
)
from forkwise.core.store.fork_point import ForkPoint, fork_point_of
from forkwise.core.store.forking import ForkVerbs
from forkwise.core.store.import_naming import Imported, ImportNaming, adopted, imported
from forkwise.core.store.record import Record
from forkwise.core.store.session import (
    Session,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionHeader,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)

log = logging.getLogger(__name__)

Draft = Mapping[str, Any]
T = TypeVar("T")
Listener = Callable[[StoreEvent], None]
#: how often a writer waits again for a session whose record was replaced meanwhile
_WRITE_LOCK_TRIES = 100


@dataclass(frozen=True)
class DiskChange:
    """What a session's file changed into behind the store's back (`follow_disk`):
    `removed`; `appended` (the log was extended: `events` are the new ones); `replaced`
    (anything else: read again whole); `summary` (not loaded: only its row changed)."""

    session_id: str
    kind: str
    events: tuple[Event, ...] = ()
    summary: SessionSummary | None = None


class SessionStore(AppendPhases, ForkVerbs):
    """Sessions by id, over a persistence backend (see `store.backend`; the store knows
    none of them by name)."""

    def __init__(self, backend: Backend) -> None:
        self.backend: Backend = backend
        #: how an append is written where waiting is not allowed (`start_append`)
        self._write_now = backend.write_now if isinstance(backend, WritesAtOnce) else None
        self._records: dict[str, Record] = {}
        #: generations of records dropped after a failed append: the log was only extended
        #: at most, so what callers hold of it is not stale when it is read again
        self._kept_generations: dict[str, str] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        #: the backend calls that may find an import's files unnamed (`_persist`, `_load`)
        self._naming = ImportNaming(backend, self._lock, self._forget_unnamed)
        #: who runs each phase of a started append (`appending.StartedAppend`)
        self._phases = threading.Lock()
        #: sessions an import created (`name_later`) whose files never got their names,
        #: with why: no longer in the store, reported failed at their `flush`
        self._lost = self._naming.lost
        #: the replies the last source a new fork's usage was checked against counts:
        #: (its id, its length, the replies)
        self._replies: tuple[str, int, frozenset[str]] | None = None
        #: several hosts write this store, one writer per session (`claim`, `unheld`)
        self._shared = backend if isinstance(backend, SharedWriters) else None

    @property
    def shared(self) -> bool:
        return self._shared is not None

    def claim(self, session_id: str) -> None:
        """Become the session's writer (SessionBusy: another host is). Nothing to do on a
        store one process writes (its writer lock covers every session)."""
        if self._shared is not None:
            self._shared.claim(session_id)

    def unheld(self, session_ids: Sequence[str]) -> set[str] | None:
        """Of `session_ids`, those no live host writes (`SharedWriters.unheld`); None on a
        store one process writes, where the writer lock says it for the whole store."""
        return None if self._shared is None else self._shared.unheld(session_ids)

    # --- subscriptions -------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` after every committed change; returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _announce(self, change: StoreEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # a broken subscriber must not break the store
                log.exception("store subscriber failed on %s", change.kind)

    # --- reading -------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._records or self.backend.exists(session_id)

    def ids(self) -> list[str]:
        with self._lock:
            return sorted(set(self._records) | set(self.backend.session_ids()))

    def get(self, session_id: str) -> Session:
        """A snapshot of the session; SourceNotFound when there is none."""
        with self._lock:
            return self._record(session_id).snapshot()

    def read_log(self, session_id: str) -> tuple[SessionHeader, Sequence[Event]]:
        """The session's header and events, without keeping them loaded when they were not:
        a pass over every log (the usage of a listing) holds one log at a time."""
        with self._lock:
            rec = self._records.get(validate_session_id(session_id))
            if rec is not None:
                return rec.header, rec.events
            loaded = self._load(session_id)
            if loaded is None:
                raise SourceNotFound(f"there is no session {session_id!r}", session_id=session_id)
            return loaded.header, loaded.events

    def events_since(
        self, session_id: str, after: int, limit: int | None = None
    ) -> tuple[Event, ...]:
        """Events with seq > `after`, at most `limit` of them (a page)."""
        with self._lock:
            events = self._record(session_id).events
            return events[after:] if limit is None else events[after : after + limit]

    def last_seq(self, session_id: str) -> int:
        with self._lock:
            return len(self._record(session_id).events)

    def summary(self, session_id: str) -> SessionSummary:
        with self._lock:
            return self._record(session_id).summary

    def list(self, progress: Progress | None = None) -> list[SessionSummary]:
        """Summaries of every session, without loading logs that are not loaded yet.

        `progress(done, total)` is called now and then while summaries are rebuilt from
        the logs (a missing or stale index on a large store).
        """
        with self._lock:
            loaded = [rec.summary for rec in self._records.values()]
            rest = self.backend.summaries(set(self._records), progress)
        return sorted(loaded + rest, key=lambda s: s.id)

    def forget(self, session_id: str, *, replaced: bool = False) -> None:
        """Drop what is loaded of a session another process changed (a shared store), so
        that it is read again on next use. `replaced`: it was truncated or deleted, so what
        callers hold of it is stale; otherwise it only grew."""
        with self._lock:
            rec = self._records.pop(session_id, None)
            if rec is not None and not replaced:
                self._kept_generations[session_id] = rec.generation

    def adopt_message_ids(self, snap: Session, ids: set[str]) -> None:
        """`ids`: the message ids of `snap`'s log, as a replay of it found them. A long log
        opened from the index has its ids gathered on the first write (the duplicate-id
        rule), decoding every message line; a replay has them already."""
        with self._lock:
            rec = self._records.get(snap.id)
            if (
                rec is not None
                and rec.generation == snap.generation
                and rec.state.last_seq == snap.last_seq
            ):
                rec.state.adopt_message_ids(ids)

    def torn_tail(self, session_id: str) -> bytes | None:
        with self._lock:
            return self._record(session_id).torn_tail

    def _record(self, session_id: object) -> Record:
        sid = validate_session_id(session_id)
        rec = self._records.get(sid)
        if rec is None:
            loaded = self._load(sid)
            if loaded is None:
                raise SourceNotFound(f"there is no session {sid!r}", session_id=sid)
            summary = loaded.summary or SessionSummary.start(loaded.header).fold(loaded.events)
            events = loaded.events
            log = events if isinstance(events, EventLog) else EventLog(events)
            rec = Record(
                loaded.header,
                log,
                loaded.state,
                summary,
                torn_tail=loaded.torn_tail,
                point=loaded.point,
            )
            kept = self._kept_generations.pop(sid, None)
            if kept is not None:
                rec.generation = kept
            self._records[sid] = rec
        return rec

    def _fresh(self, source: Session | str) -> Record:
        if isinstance(source, Session):
            rec = self._records.get(source.id)
            if rec is None and self.backend.exists(source.id):
                rec = self._record(source.id)
            if (
                rec is None
                or rec.generation != source.generation
                or len(rec.events) < source.last_seq
            ):
                raise StaleSession(
                    f"session {source.id!r} was truncated, deleted or replaced since it was read",
                    session_id=source.id,
                )
            return rec
        return self._record(source)

    # --- writing -------------------------------------------------------------------

    def create(
        self,
        session_id: str | None = None,
        seed: Iterable[Event | Draft] = (),
        meta: Mapping[str, Any] | None = None,
        *,
        cwd: str = "",
        parent_session: str | None = None,
        follow: Sequence[Draft] = (),
    ) -> Session:
        """Create a session whose log starts with `seed` (events or records with seq 1..n);
        `follow` are drafts appended right after the seed, in the same atomic write."""
        check_text(cwd, "cwd")
        with self._lock:
            sid = self._new_id(session_id)
            seed_events = [e if isinstance(e, Event) else Event.from_record(dict(e)) for e in seed]
            state = BracketState().feed_all(seed_events)
            header = SessionHeader(
                id=sid,
                created=now_ts(),
                cwd=cwd,
                parent_session=validate_session_id(parent_session) if parent_session else None,
                seed_length=len(seed_events),
                meta=MappingProxyType(dict(meta or {})),
            )
            return self._commit_create(header, seed_events, state, follow)

    def import_session(
        self, header: SessionHeader, events: Sequence[Event], header_raw: bytes | None = None
    ) -> Session:
        """Adopt a complete log as it is (header and events unchanged), e.g. from a file;
        `header_raw`, the header line as read, is kept as it is."""
        with self._lock:
            validate_session_id(header.id)
            if self.exists(header.id):
                raise DuplicateSessionId(
                    f"a session {header.id!r} exists already", session_id=header.id
                )
            state = BracketState().feed_all(events)
            seed, rest = tuple(events[: header.seed_length]), tuple(events[header.seed_length :])
            return self._commit_create(header, seed, state, (), built=rest, header_raw=header_raw)

    def import_records(
        self,
        header: SessionHeader,
        records: Iterable[dict[str, Any]],
        *,
        name_later: bool = False,
        seed_by_reference: bool = False,
    ) -> Session:
        """Adopt a session an import made: `records` (`seq` 1, 2, …, `type`, `ts`, fields;
        JSON values as a decoder makes them: dict, list, str, int, float, bool, None; the
        store takes them over) are checked as the loader checks a file's lines and written
        in one atomic write (`import_naming.py`). `name_later`: the session is
        written when this returns, and named and durable once `flush` is called for it (an
        import of many files syncs them together, and the folder once for a batch of them).
        `seed_by_reference`: the seed is the parent's first events, which the backend may
        refer to instead of storing them again (a branch of an imported file)."""
        with self._lock:
            self._new_id(header.id)  # a valid id no session has
            parent = self._records.get(header.parent_session or "")
            seed_of = parent.events if seed_by_reference and parent is not None else None
            return self._adopt_imported(
                imported(header, records, name_later, seed_by_reference, seed_of)
            )

    def import_checked(self, checked: LoadedLog, *, name_later: bool = False) -> Session:
        """`import_records` of records `check_records` has checked and encoded already
        (`checked`: its result, made in this process or in a worker process that read the
        session's file): the same session, stored the same bytes, without checking it
        again (a session with no parent in its file: its seed, if any, is stored whole)."""
        with self._lock:
            self._new_id(checked.header.id)
            return self._adopt_imported(adopted(checked, name_later))

    def _adopt_imported(self, got: Imported) -> Session:
        with self._lock:
            self._persist(got.change)
            summary = self._usage_checked(got.summary)
            rec = Record(got.change.header, got.events, got.state, summary, point=got.point)
            return self._adopt(rec, got.change)

    def release(self, session_ids: Iterable[str]) -> None:
        """Let go of what is loaded of these sessions once the backend has indexed it (as
        `close` does for every session): an import of many files keeps a batch in memory,
        not all it read, and a session is read again from its file when it is used."""
        with self._lock:
            recs = [rec for sid in session_ids if (rec := self._records.get(sid)) is not None]
            if not recs:
                return
            if self.backend.writable:
                known = [Remembered(r.summary, r.state, self._point(r), r.events) for r in recs]
                self.backend.save_summaries(known)
            for rec in recs:
                self.forget(rec.header.id)  # only let go of: what callers hold still holds

    @contextlib.contextmanager
    def index_held(self) -> Iterator[None]:
        """While entered, the backend's index is saved once, on leaving (an import of many
        sessions), when the backend keeps one (`HoldsIndex`)."""
        if not isinstance(self.backend, HoldsIndex):
            yield
            return
        with self._lock:
            held = self.backend.index_held()
            held.__enter__()
        try:
            yield
        finally:
            with self._lock:
                held.__exit__(None, None, None)  # the save, under the lock as every other

    def flush(self, session_ids: Iterable[str]) -> None:
        """Make everything written to these sessions durable (an import's sessions created
        with `name_later`); raises StorageError when the backend cannot. The sessions of
        `session_ids` whose files never got their names, at this flush or at any change
        before it (`_persist`), are named in one StorageError (`lost`), after the others
        are flushed."""
        with self._lock:
            ids = list(session_ids)
            for sid in ids:
                if sid in self._lost:
                    continue
                try:
                    self._persist(SessionFlushed(sid))
                except StorageError:
                    if sid not in self._lost:
                        raise
            lost = [sid for sid in ids if sid in self._lost]
            if lost:
                why = self._lost[lost[0]]
                for sid in lost:
                    del self._lost[sid]  # reported once
                raise StorageError(why.message, **{**why.details, "lost": lost})

    def follow_disk(self, session_id: str, present: bool) -> DiskChange | None:
        """Bring the store in line with a session file another program created, changed
        or removed (a watcher saw it); None when the change was this store's own write.
        Runs after any write to the session in flight (its write lock is taken)."""
        sid = validate_session_id(session_id)
        with self._lock:
            if sid not in self._records:  # not loaded: only its row can have changed
                if not present or not self.backend.exists(sid):
                    self.backend.forget(sid)
                    return DiskChange(sid, "removed")
                return DiskChange(sid, "summary", summary=self._row_from_disk(sid))
        with self._writing(sid, must_exist=False), self._lock:
            rec = self._records.get(sid)
            if not present or not self.backend.exists(sid):
                if rec is not None:
                    del self._records[sid]
                self.backend.forget(sid)
                return DiskChange(sid, "removed")
            if rec is not None and self.backend.unchanged(sid):
                return None
            if rec is None:
                return DiskChange(sid, "summary", summary=self._row_from_disk(sid))
            old = rec.events
            del self._records[sid]
            try:
                new = self._record(sid)
            except ForkwiseError:  # damaged now: its row says so
                return DiskChange(sid, "summary", summary=self._row_from_disk(sid))
            n = len(old)
            grown = len(new.events) >= n
            if grown and (n == 0 or new.events[n - 1].encode() == old[n - 1].encode()):
                new.generation = rec.generation  # only extended: what callers hold still holds
                return DiskChange(sid, "appended", tuple(new.events[n:]), new.summary)
            return DiskChange(sid, "replaced", summary=new.summary)

    def _row_from_disk(self, sid: str) -> SessionSummary | None:
        """The session's row as the backend finds it in its file (and indexes it)."""
        others = set(self.backend.session_ids()) - {sid}
        rows = self.backend.summaries(others)
        return rows[0] if rows else None

    def _recheck(self, session_id: object) -> None:
        """Forget a loaded record whose stored form changed behind the store's back, so
        that it is read again — and refused there if it is damaged or gone — rather than
        copied or vouched for from memory."""
        rec = self._records.get(session_id) if isinstance(session_id, str) else None
        if rec is not None and not self.backend.unchanged(rec.header.id):
            self._drop(rec)

    def _drop(self, rec: Record) -> None:
        """Forget a record after a failed append: the file may hold part of the batch, so
        it is read from disk on next use; what callers hold of it is not stale (the log was
        only extended, at most)."""
        self._records.pop(rec.header.id, None)
        self._kept_generations[rec.header.id] = rec.generation

    @contextlib.contextmanager
    def _writing(self, session_id: object, must_exist: bool = True) -> Iterator[Record | None]:
        """Hold the write lock of a session (one change to it at a time) for the block
        (`_take_writing`); yields its current record, or None when there is no such
        session and `must_exist` is False (the caller reports that as it must)."""
        rec = self._take_writing(session_id, must_exist)
        try:
            yield rec
        finally:
            if rec is not None:
                rec.writing.release()

    def _take_writing(self, session_id: object, must_exist: bool = True) -> Record | None:
        """Take the write lock of a session, without holding the store lock, and leave it
        held (an append releases it at its commit, or when it fails); its current record.
        None, with no lock taken, when there is no such session and `must_exist` is
        False."""
        for _ in range(_WRITE_LOCK_TRIES):
            with self._lock:
                sid = validate_session_id(session_id)
                if not must_exist and sid not in self._records and not self.backend.exists(sid):
                    return None
                rec = self._record(sid)
            rec.writing.acquire()
            with self._lock:
                if self._records.get(sid) is rec:
                    return rec
            rec.writing.release()
            # the record was replaced while this thread waited (a failed append): again
        raise StorageError(f"session {session_id!r} kept changing while waiting to write it")

    def truncate(self, source: Session | str, through: int) -> Session:
        """Replace in place: keep events ≤ `through`, delete the rest (no branch, no record).

        Context summaries are events, so those after the boundary go with everything else.
        """
        sid = source.id if isinstance(source, Session) else source
        with self._writing(sid, must_exist=False), self._lock:
            rec = self._fresh(source)
            b = check_boundary(rec.events, through)
            if b == len(rec.events):
                return rec.snapshot()
            kept = rec.events.view(b)
            header = rec.header
            if b < header.seed_length:
                header = dataclasses.replace(header, seed_length=b)
            self._persist(SessionTruncated(header.id, b, kept, header))
            rec.header = header
            rec.events = rec.events.prefix(b)
            rec.state = BracketState.closed_at(rec.events.view())
            rec.summary = SessionSummary.start(rec.header).fold(rec.events)
            kept_point = rec.point if rec.point is not None and rec.point.seq <= b else None
            # the summary decoded the events already: the point costs little more
            rec.point = fork_point_of(rec.events, kept_point, decode=True)
            rec.generation = random_hex(6)
            rec.torn_tail = None
            snapshot = rec.snapshot()
            self._announce(SessionTruncated(rec.header.id, b, ()))
        return snapshot

    def delete(self, source: Session | str) -> None:
        sid = source.id if isinstance(source, Session) else source
        with self._writing(sid, must_exist=False), self._lock:
            rec = self._fresh(source)
            self._persist(SessionDisposed(rec.header.id))
            del self._records[rec.header.id]
            self._announce(SessionDisposed(rec.header.id))

    def restore(self, session_id: str) -> Session:
        """Bring a deleted session back from the backend's trash (Undo of a delete); it is
        announced as created, with its events, so every subscriber learns of it again."""
        sid = validate_session_id(session_id)
        with self._lock:
            if self.exists(sid):
                raise DuplicateSessionId(f"a session {sid!r} exists already", session_id=sid)
            if not isinstance(self.backend, Restorable) or not self.backend.restore(sid):
                raise SourceNotFound(
                    f"there is no deleted session {sid!r} to restore", session_id=sid
                )
            rec = self._record(sid)
            seed = rec.header.seed_length
            snapshot = rec.snapshot()
            self._announce(
                SessionCreated(rec.header, rec.events.view(seed), tuple(rec.events[seed:]))
            )
        return snapshot

    def trashed(self) -> builtins.list[TrashedSession]:
        """The deleted sessions the backend keeps (the Trash), the latest deleted first;
        none for a backend that keeps nothing deleted."""
        with self._lock:
            return self.backend.trashed() if isinstance(self.backend, Restorable) else []

    def empty_trash(self, session_id: str | None = None) -> builtins.list[str]:
        """Let a deleted session (every one when None) go for good; the ids removed."""
        if session_id is not None:
            session_id = validate_session_id(session_id)
        with self._lock:
            if not isinstance(self.backend, Restorable):
                return []
            if not self.backend.writable:
                raise ReadOnlyStore("this store is open read-only: its trash is kept as it is")
            return self.backend.empty_trash(session_id)

    def close(self) -> None:
        """Flush, remember what is known of loaded sessions, release the backend."""
        with self._lock:
            # a read-only backend saves them too when it may (a reader refreshes caches
            # while no process holds the writer lock), or drops them
            self.backend.save_summaries(
                [
                    Remembered(rec.summary, rec.state, self._point(rec), rec.events)
                    for rec in self._records.values()
                ]
            )
            self.backend.close()

    # --- helpers -------------------------------------------------------------------

    def _persist(self, change: StoreEvent) -> None:
        """`backend.persist`, for every change; an import's sessions found lost meanwhile
        are dropped and kept for their `flush` (`ImportNaming.persist`)."""
        self._naming.persist(change)

    def _load(self, session_id: str) -> LoadedLog | None:
        """`backend.load`; as `_persist` for an import's sessions found lost."""
        return self._naming.load(session_id)

    def _forget_unnamed(self, session_id: str) -> None:
        """Drop a session an import made whose file never got its name: not on disk."""
        self._records.pop(session_id, None)
        self._kept_generations.pop(session_id, None)

    def _usage_checked(self, summary: SessionSummary) -> SessionSummary:
        """A new fork's summary with its usage head checked against its source's replies
        (`OwnUsage.resolved`), the source's log as this store holds it: an import's
        branches come right after their source, which is counted once for all of them."""
        usage, source = summary.usage, summary.parent_session
        if usage is None or not usage.head:
            return summary
        counted: frozenset[str] = frozenset()
        if source is not None:
            try:
                _, events = self.read_log(source)
            except ForkwiseError:
                events = ()
            kept = self._replies
            if kept is not None and kept[0] == source and kept[1] == len(events):
                counted = kept[2]
            else:
                from forkwise.core.log.usage import session_tokens

                counted = frozenset(session_tokens(events, len(events)).replies)
                self._replies = (source, len(events), counted)
        try:
            return dataclasses.replace(summary, usage=usage.resolved(counted))
        except TypeError:
            return dataclasses.replace(summary, usage=None)

    @staticmethod
    def _point(rec: Record) -> ForkPoint | None:
        """The point of the record's last completed turn, brought forward from the one it
        knows; kept on the record, so that the next call starts from there."""
        rec.point = fork_point_of(rec.events, rec.point)
        return rec.point

    def _new_id(self, requested: str | None) -> str:
        if requested is None:
            return new_session_id(taken=_Taken(self))
        sid = validate_session_id(requested)
        if self.exists(sid):
            raise DuplicateSessionId(f"a session {sid!r} exists already", session_id=sid)
        return sid

    def _commit_create(
        self,
        header: SessionHeader,
        seed: Sequence[Event],
        state: BracketState,
        follow: Sequence[Draft],
        *,
        built: tuple[Event, ...] = (),
        seed_summary: SessionSummary | None = None,
        seed_point: ForkPoint | None = None,
        copied_from: str | None = None,
        header_raw: bytes | None = None,
    ) -> Session:
        follow_events = built + build_events(follow, len(seed) + len(built))
        feed_atomically(state, follow_events[len(built) :])
        if isinstance(seed, EventView):
            events = seed.log.prefix(len(seed), follow_events)
        else:
            seed = tuple(seed)
            events = EventLog([*seed, *follow_events])
        change = SessionCreated(header, seed, follow_events, copied_from, header_raw=header_raw)
        self._persist(change)
        source_title = (
            SessionSummary.start(self._records[copied_from].header).title
            if seed_summary is not None and copied_from is not None
            else None
        )
        if seed_point is not None and seed_point.seq == len(seed) and seed_summary is None:
            summary = seed_point.summary(header).fold(follow_events)  # the seed is not folded
        else:
            summary = SessionSummary.start(header).fold(events, seed_summary, source_title)
        summary = self._usage_checked(summary)
        return self._adopt(Record(header, events, state, summary, point=seed_point), change)

    def _adopt(self, rec: Record, change: SessionCreated) -> Session:
        """Keep the record of a session just created and announce it; its snapshot."""
        self._records[rec.header.id] = rec
        self._kept_generations.pop(rec.header.id, None)  # a new session: nothing is kept
        snapshot = rec.snapshot()
        self._announce(change)
        return snapshot


class _Taken:
    """`in` test against a store's ids, for the id generator."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and self._store.exists(item)
