"""Persistence on PostgreSQL: one store a team shares (`--store postgresql://…`).

Each event keeps its exact serialized line (the log stays the source of truth: unknown event
types round-trip byte for byte) under the primary key (session, seq); the summary row a
listing reads is written in the same transaction as the events it counts; a fork copies its
seed inside the server (one INSERT … SELECT, one transaction). One writer per session: the
first change a backend makes to a session takes a session-level advisory lock on it, held
until the backend closes, so a second host that tries to change it gets `session-busy`.
Every committed change is announced on the `forkwise` channel (LISTEN/NOTIFY; see
`postgres_watch`): other hosts see sessions created, forked, grown and deleted as they
commit.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import psycopg
from psycopg import errors as pg_errors

from forkwise.core.errors import (
    DuplicateSessionId,
    ForkwiseError,
    ReadOnlyStore,
    SessionBusy,
    StaleSession,
    StorageError,
)
from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    TURN_END,
    TURN_START,
    Event,
)
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import IndexedFork, LoadedLog, Progress, Remembered
from forkwise.core.store.backends.postgres_connect import connect, first_line
from forkwise.core.store.backends.postgres_rows import (
    as_json,
    facts_of,
    header_of,
    session_events,
    text_of,
    write_events,
)
from forkwise.core.store.backends.postgres_upgrade import upgrade_summaries
from forkwise.core.store.fork_point import ForkPoint, fork_point_of
from forkwise.core.store.session import (
    EventsAppended,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)

#: the LISTEN/NOTIFY channel every change is announced on
CHANNEL = "forkwise"
#: the event types after which the kept facts (open turn, approvals, last turn end) change
_FACT_TYPES = frozenset({TURN_START, TURN_END, APPROVAL_REQUEST, APPROVAL_RESOLVE})
#: a notification's payload must stay under 8000 bytes
_NOTIFY_LIMIT = 7000

SCHEMA = """
CREATE TABLE IF NOT EXISTS forkwise_sessions (
    id text PRIMARY KEY,
    header bytea NOT NULL,
    parent text,
    events bigint NOT NULL,
    updated text NOT NULL,
    -- json, not jsonb: a title or a first message may hold a NUL, which jsonb refuses
    summary json NOT NULL,
    -- what a check of the log found, while `events` is still facts->'events' (see facts_of)
    facts json
);
CREATE INDEX IF NOT EXISTS forkwise_sessions_parent ON forkwise_sessions (parent);
CREATE INDEX IF NOT EXISTS forkwise_sessions_updated ON forkwise_sessions (updated DESC);
CREATE TABLE IF NOT EXISTS forkwise_events (
    session text NOT NULL REFERENCES forkwise_sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    -- bytes: an event type is any string, NUL included, which text refuses
    type bytea NOT NULL,
    line bytea NOT NULL,
    PRIMARY KEY (session, seq)
);
-- what the rows are written as, where an older Forkwise wrote them otherwise
CREATE TABLE IF NOT EXISTS forkwise_meta (key text PRIMARY KEY, value bigint NOT NULL);
"""

#: the advisory lock key of a session: 64 bits from its id and the schema the store is in
#: (two stores in two schemas of one database are independent)
_KEY = "hashtextextended('forkwise:' || current_schema() || ':' || %s, 0)"


class PostgresBackend:
    """The store's backend on a PostgreSQL database (see the module docstring)."""

    def __init__(self, url: str, *, writable: bool = True) -> None:
        self.url = url
        self.writable = writable
        self._conn = connect(url)
        self._lock = threading.Lock()
        #: sessions this backend is the writer of (their advisory locks are held)
        self._held: set[str] = set()
        #: the server processes of this backend's connections (their notes are its own)
        self._pids: set[int] = {self._conn.info.backend_pid}
        try:
            self._run(self._create_schema)
            if writable:
                self._run(upgrade_summaries)
            #: the schema the tables are in (several stores may share a database)
            self._schema: str = self._run(
                lambda conn: str(conn.execute("SELECT current_schema()").fetchall()[0][0])
            )
        except BaseException:
            self._conn.close()
            raise

    # --- plumbing ------------------------------------------------------------------

    def _run(self, fn: Callable[[psycopg.Connection[Any]], Any]) -> Any:
        """Run `fn(conn)` under the backend's lock; a database failure is a StorageError."""
        with self._lock:
            try:
                if self._conn.closed:  # after close (or a lost server): a connection per call
                    self._held.clear()
                    with connect(self.url) as conn:
                        self._pids.add(conn.info.backend_pid)
                        try:
                            return fn(conn)
                        finally:
                            self._held.clear()  # its advisory locks end with it
                return fn(self._conn)
            except ForkwiseError:
                raise
            except pg_errors.UniqueViolation as exc:
                raise DuplicateSessionId(f"a session exists already: {first_line(exc)}") from exc
            except psycopg.Error as exc:
                raise StorageError(f"the store database failed: {first_line(exc)}") from exc

    @staticmethod
    def _create_schema(conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            # two hosts starting at once must not both create the tables
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('forkwise:schema', 0))")
            conn.execute(SCHEMA)

    def _claim(self, conn: psycopg.Connection[Any], session_id: str) -> None:
        """Become the writer of a session, or raise session-busy."""
        if session_id in self._held:
            return
        row = conn.execute(f"SELECT pg_try_advisory_lock({_KEY})", (session_id,)).fetchone()
        if not row or not row[0]:
            raise SessionBusy(
                f"session {session_id!r} is being written by another host on this database; "
                "nothing was changed",
                session_id=session_id,
            )
        self._held.add(session_id)

    def claim(self, session_id: str) -> None:
        """Become the writer of a session before a turn starts on it: a second host's
        prompt is told `session-busy` at once, not after its turn failed to start."""
        if not self.writable:
            raise ReadOnlyStore("this store was opened read-only")
        self._run(lambda conn: self._claim(conn, session_id))

    def unheld(self, session_ids: Sequence[str]) -> set[str]:
        """The sessions whose advisory lock no server process holds (`pg_locks`: asked,
        never taken, so that looking makes no other host's claim fail)."""
        if not session_ids:
            return set()

        def ask(conn: psycopg.Connection[Any]) -> set[str]:
            rows = conn.execute(
                f"""SELECT s.id FROM unnest(%s::text[]) AS s(id), LATERAL (
                        SELECT {_KEY.replace("%s", "s.id")} AS k) AS key
                    WHERE NOT EXISTS (
                        SELECT 1 FROM pg_locks l
                        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                          AND l.database = (SELECT oid FROM pg_database
                                            WHERE datname = current_database())
                          AND l.classid::bigint = (key.k >> 32) & 4294967295
                          AND l.objid::bigint = key.k & 4294967295)""",
                (list(session_ids),),
            ).fetchall()
            return {str(r[0]) for r in rows}

        found: set[str] = self._run(ask)
        return found - self._held

    # --- writing -------------------------------------------------------------------

    def persist(self, change: StoreEvent) -> None:
        if isinstance(change, SessionFlushed):
            return  # every change commits (synchronous_commit) before persist returns
        if not self.writable:
            raise ReadOnlyStore("this store was opened read-only")
        self._run(lambda conn: self._persist(conn, change))

    def _persist(self, conn: psycopg.Connection[Any], change: StoreEvent) -> None:
        sid = change.session_id
        self._claim(conn, sid)
        note: dict[str, object]
        summary: SessionSummary | None = None
        with conn.transaction():
            if isinstance(change, SessionCreated):
                summary = self._create(conn, change)
                note = {"kind": "created", "id": sid, "parent": change.header.parent_session}
            elif isinstance(change, EventsAppended):
                if not change.events:
                    return
                summary = self._append(conn, sid, change.events)
                note = {"kind": "grown", "id": sid, "events": change.events[-1].seq}
            elif isinstance(change, SessionTruncated):
                summary = self._truncate(conn, change)
                note = {"kind": "truncated", "id": sid, "events": change.through}
            elif isinstance(change, SessionDisposed):
                conn.execute("DELETE FROM forkwise_sessions WHERE id = %s", (sid,))
                note = {"kind": "deleted", "id": sid}
            else:  # pragma: no cover - the union is closed
                raise StorageError(f"unknown store change {change!r}")
            note["schema"] = self._schema
            if summary is not None:  # the listing row, when it fits
                note["summary"] = summary.to_index()
            payload = orjson.dumps(note)
            if len(payload) > _NOTIFY_LIMIT:
                del note["summary"]
                payload = orjson.dumps(note)
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload.decode()))

    def _create(self, conn: psycopg.Connection[Any], change: SessionCreated) -> SessionSummary:
        header, seed, follow = change.header, change.seed, change.events
        summary = self._created_summary(conn, change)
        conn.execute(
            "INSERT INTO forkwise_sessions (id, header, parent, events, updated, summary)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (
                header.id,
                orjson.dumps(header.to_record()),
                header.parent_session,
                summary.events,
                text_of(summary.updated),
                as_json(summary.to_index()),
            ),
        )
        if change.copied_from is not None and len(seed):
            copied = conn.execute(
                "INSERT INTO forkwise_events (session, seq, type, line)"
                " SELECT %s, seq, type, line FROM forkwise_events"
                " WHERE session = %s AND seq <= %s",
                (header.id, change.copied_from, len(seed)),
            ).rowcount
            if copied != len(seed):
                raise StaleSession(
                    f"session {change.copied_from!r} changed on the server while it was forked",
                    session_id=change.copied_from,
                )
        else:
            write_events(conn, header.id, seed, 1)
        write_events(conn, header.id, follow, len(seed) + 1)
        return summary

    def _created_summary(
        self, conn: psycopg.Connection[Any], change: SessionCreated
    ) -> SessionSummary:
        """The new session's summary; a fork of a whole log starts from its source's row
        instead of reading the seed again."""
        start = SessionSummary.start(change.header)
        seed = change.seed
        if change.seed_span is not None and change.copied_from is not None:
            # a fork from `indexed_fork`: its seed is not read, the point says it all
            point = self._point(conn, change.copied_from, len(seed))
            return point.summary(change.header).fold(change.events)
        if change.copied_from is not None:
            row = conn.execute(
                "SELECT header, summary FROM forkwise_sessions WHERE id = %s",
                (change.copied_from,),
            ).fetchone()
            if row is not None and row[1].get("events") == len(seed):
                source = SessionSummary.from_index(row[1])
                title = SessionSummary.start(header_of(row[0])).title
                return start.fold(seed, source, title).fold(change.events)
        return start.fold(seed).fold(change.events)

    def _point(self, conn: psycopg.Connection[Any], sid: str, seq: int) -> ForkPoint:
        """The kept point of a session's last completed turn, which must be at `seq`."""
        row = conn.execute(
            "SELECT events, facts FROM forkwise_sessions WHERE id = %s", (sid,)
        ).fetchone()
        if row is None or not row[1] or row[1].get("events") != row[0] or not row[1]["point"]:
            raise StaleSession(f"session {sid!r} changed while it was forked", session_id=sid)
        point = ForkPoint(**row[1]["point"])
        if point.seq != seq:
            raise StaleSession(f"session {sid!r} changed while it was forked", session_id=sid)
        return point

    def _append(
        self, conn: psycopg.Connection[Any], sid: str, events: Sequence[Event]
    ) -> SessionSummary:
        row = conn.execute(
            "SELECT events, summary, facts FROM forkwise_sessions WHERE id = %s FOR UPDATE",
            (sid,),
        ).fetchone()
        if row is None or row[0] != events[0].seq - 1:
            # another host changed the session since this one read it: read it again
            raise StaleSession(
                f"session {sid!r} changed on the server since it was read", session_id=sid
            )
        summary = SessionSummary.from_index(row[1]).fold(events)
        write_events(conn, sid, events, events[0].seq)
        self._save_summary(conn, summary)
        facts = row[2]
        if facts and facts.get("events") == row[0] and not {e.type for e in events} & _FACT_TYPES:
            facts["events"] = summary.events  # no turn began, ended or waits anew: still true
        else:
            facts = None
        conn.execute(
            "UPDATE forkwise_sessions SET facts = %s WHERE id = %s",
            (as_json(facts) if facts else None, sid),
        )
        return summary

    def _truncate(
        self, conn: psycopg.Connection[Any], change: SessionTruncated
    ) -> SessionSummary:
        sid = change.session_id
        conn.execute(
            "DELETE FROM forkwise_events WHERE session = %s AND seq > %s", (sid, change.through)
        )
        header = change.header
        if header is None:
            row = conn.execute(
                "SELECT header FROM forkwise_sessions WHERE id = %s", (sid,)
            ).fetchone()
            if row is None:
                raise StaleSession(f"session {sid!r} is gone from the server", session_id=sid)
            header = header_of(row[0])
        summary = SessionSummary.start(header).fold(change.kept)
        conn.execute(
            "UPDATE forkwise_sessions SET header = %s, facts = NULL WHERE id = %s",
            (orjson.dumps(header.to_record()), sid),
        )
        self._save_summary(conn, summary)
        return summary

    def watch(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call `callback(note)` on a thread of its own for every change another backend
        commits to this store (`kind`: created, grown, truncated, deleted; `id`; `summary`:
        the listing row, unless it did not fit a notification); returns the stop function."""
        from forkwise.core.store.backends.postgres_watch import Watcher

        watcher = Watcher(lambda: connect(self.url), CHANNEL, self._schema, self._pids, callback)
        return watcher.stop

    @staticmethod
    def _save_summary(conn: psycopg.Connection[Any], summary: SessionSummary) -> None:
        conn.execute(
            "UPDATE forkwise_sessions SET events = %s, updated = %s, summary = %s WHERE id = %s",
            (
                summary.events,
                text_of(summary.updated),
                as_json(summary.to_index()),
                summary.id,
            ),
        )

    # --- reading -------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return bool(
            self._run(
                lambda conn: conn.execute(
                    "SELECT 1 FROM forkwise_sessions WHERE id = %s", (session_id,)
                ).fetchone()
            )
        )

    def session_ids(self) -> list[str]:
        rows = self._run(
            lambda conn: conn.execute("SELECT id FROM forkwise_sessions ORDER BY id").fetchall()
        )
        return [r[0] for r in rows]

    def load(self, session_id: str) -> LoadedLog | None:
        def read(conn: psycopg.Connection[Any]) -> LoadedLog | None:
            with conn.transaction():  # the header and the lines of one moment
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                row = conn.execute(
                    "SELECT header, summary, facts FROM forkwise_sessions WHERE id = %s",
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                events = session_events(conn, session_id)
            header = header_of(row[0])
            summary = SessionSummary.from_index(row[1])
            facts = row[2]
            if facts and facts.get("events") == len(events):  # checked before: kept facts
                state = BracketState.restore(
                    events, facts["openTurn"], facts["openTurnSeq"], dict(facts["pending"])
                )
                point = ForkPoint(**facts["point"]) if facts.get("point") else None
                return LoadedLog(header, events, state, summary=summary, point=point)
            state = BracketState().feed_all(events)
            return LoadedLog(header, events, state, summary=summary, point=fork_point_of(events))

        loaded: LoadedLog | None = self._run(read)
        return loaded

    def summaries(self, skip: set[str], progress: Progress | None = None) -> list[SessionSummary]:
        rows = self._run(
            lambda conn: conn.execute("SELECT id, summary FROM forkwise_sessions").fetchall()
        )
        return [SessionSummary.from_index(s) for sid, s in rows if sid not in skip]

    def save_summaries(self, records: Sequence[Remembered]) -> None:
        """Keep what the store knows of logs it read (open turn, pending approvals, the
        last completed turn), for loads without a check and forks without a read. Every
        write keeps the summary rows; these facts hold only while the log is as it was
        (same event count and last event time), which the UPDATE checks."""
        if not self.writable:
            return
        rows = [
            (facts_of(r.state, r.point, r.summary.events, r.events), r.summary.id,
             r.summary.events, text_of(r.summary.updated))
            for r in records
            if r.state.last_seq == r.summary.events
        ]  # fmt: skip
        if not rows:
            return

        def save(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    "UPDATE forkwise_sessions SET facts = %s"
                    " WHERE id = %s AND events = %s AND updated = %s",
                    rows,
                )

        self._run(save)

    def forget(self, session_id: str) -> None:
        pass  # the summary table is written with the events: nothing to drop beside them

    def unchanged(self, session_id: str) -> bool:
        """Other hosts' changes arrive as notifications (`watch`), which make the store
        forget its copy; a write on a copy another host grew is refused (stale-session)."""
        return True

    def indexed_fork(self, session_id: str) -> IndexedFork | None:
        """The facts for a fork at the last completed turn, when the kept ones still hold
        (the seed is then copied inside the server without being read here)."""
        row = self._run(
            lambda conn: conn.execute(
                "SELECT header, summary, events, facts FROM forkwise_sessions WHERE id = %s",
                (session_id,),
            ).fetchone()
        )
        facts = row[3] if row is not None else None
        if not facts or facts.get("events") != row[2] or not facts["point"]:
            return None
        if not facts.get("digest"):
            return None  # the child could not record what it copied: fork from the log
        return IndexedFork(
            header_of(row[0]),
            ForkPoint(**facts["point"]),
            (0, 0),  # no file offsets here: the rows are copied by seq
            SessionSummary.from_index(row[1]),
            waits=facts["openTurn"] is not None and bool(facts["pending"]),
            digest=facts["digest"],
        )

    def close(self) -> None:
        with self._lock:
            if not self._conn.closed:
                # now, not when the server notices the connection went: the next writer
                # may be waiting to start
                with contextlib.suppress(psycopg.Error):
                    self._conn.execute("SELECT pg_advisory_unlock_all()")
                self._conn.close()
            self._held.clear()
