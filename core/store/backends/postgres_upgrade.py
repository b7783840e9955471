"""Bringing a shared store's rows up to the form this version writes, once per database.

A summary row written before `approvals` were kept has no such key. Where its session has
no open turn that is exact (it waits for nothing) and the key is added; where a turn is
open the row cannot say whether the turn waits for the person, so the summary is folded
again from the session's events — the same rule a listing of a folder store follows for
an index of that version (`SessionSummary.from_older_index`).
"""

from __future__ import annotations

from typing import Any

import psycopg

from forkwise.core.store.backends.postgres_rows import as_json, header_of, session_events
from forkwise.core.store.session import SessionSummary

#: the summary rows' form: 2 keeps `approvals` (a row of form 1 has none)
SUMMARY_FORM = 2


def upgrade_summaries(conn: psycopg.Connection[Any]) -> int:
    """Bring every summary row of an older form up to SUMMARY_FORM, in one transaction
    that the other hosts starting at once wait for; how many rows were changed."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('forkwise:upgrade', 0))")
        row = conn.execute("SELECT value FROM forkwise_meta WHERE key = 'summaries'").fetchone()
        if row is not None and row[0] >= SUMMARY_FORM:
            return 0
        older = conn.execute(
            "SELECT id, header, summary FROM forkwise_sessions"
            " WHERE summary -> 'approvals' IS NULL FOR UPDATE"
        ).fetchall()  # `->` is SQL NULL for a missing key, JSON null for `"approvals": null`
        for sid, header, data in older:
            conn.execute(
                "UPDATE forkwise_sessions SET summary = %s WHERE id = %s",
                (as_json(_upgraded(conn, sid, header, data).to_index()), sid),
            )
        conn.execute(
            "INSERT INTO forkwise_meta (key, value) VALUES ('summaries', %s)"
            " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (SUMMARY_FORM,),
        )
        return len(older)


def _upgraded(
    conn: psycopg.Connection[Any], sid: str, header: bytes, data: dict[str, Any]
) -> SessionSummary:
    try:
        return SessionSummary.from_older_index(data)
    except (KeyError, TypeError):  # an open turn, or not a summary at all: from the events
        pass
    events = session_events(conn, sid)
    return SessionSummary.start(header_of(bytes(header))).fold(events)
