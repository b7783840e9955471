"""The rows of a store in PostgreSQL as Python values: kept facts, headers, event rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import orjson
import psycopg
from psycopg.types.json import Json

from forkwise.core.log.digest import prefix_digest
from forkwise.core.log.event_log import EventLog, event_lines, event_types, head
from forkwise.core.log.events import Event
from forkwise.core.log.turns import BracketState
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import SessionHeader

_COPY_EVENTS = "COPY forkwise_events (session, seq, type, line) FROM STDIN (FORMAT BINARY)"


def facts_of(
    state: BracketState, point: ForkPoint | None, events: int, log: Sequence[Event]
) -> Json:
    """The `facts` column: what a check of a log of `events` events found, with the digest
    of its lines through `point` when `log` holds them (a fork made from these facts
    records it, as one made from the log does)."""
    digest = prefix_digest(head(log, point.seq)) if point and len(log) >= point.seq else None
    return as_json(
        {
            "events": events,
            "openTurn": state.open_turn,
            "openTurnSeq": state.open_turn_seq,
            "pending": dict(state.pending_approvals),
            "point": dataclasses.asdict(point) if point is not None else None,
            "digest": digest,
        }
    )


def as_json(value: Any) -> Json:
    """A value for a json column, encoded by orjson."""
    return Json(value, dumps=_dumps)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def text_of(value: str) -> str:
    """A string for a text column (which refuses NUL); only the ordering index reads it."""
    return value.replace("\x00", "")


def header_of(raw: bytes) -> SessionHeader:
    return SessionHeader.from_record(orjson.loads(raw))


def write_events(
    conn: psycopg.Connection[Any], sid: str, events: Sequence[Event], first: int
) -> None:
    """Write events (seq `first`, `first + 1`, …) with COPY, one round trip for any number
    of them, from their lines and types (a lazily read log is not decoded)."""
    if not len(events):
        return
    with (
        conn.cursor() as cur,
        cur.copy(_COPY_EVENTS) as cp,
    ):
        cp.set_types(["text", "int8", "bytea", "bytea"])
        for seq, (etype, line) in enumerate(
            zip(event_types(events), event_lines(events), strict=True), start=first
        ):
            cp.write_row((sid, seq, etype.encode("utf-8", "surrogatepass"), line))


def session_events(conn: psycopg.Connection[Any], session_id: str) -> EventLog:
    """A session's events as the rows keep them (lines decoded when read), in order."""
    cur = conn.cursor(binary=True)
    cur.execute(
        "SELECT line, type FROM forkwise_events WHERE session = %s ORDER BY seq", (session_id,)
    )
    rows = cur.fetchall()
    types = [bytes(r[1]).decode("utf-8", "surrogatepass") for r in rows]
    return EventLog.lazy([bytes(r[0]) for r in rows], types)
