"""The round-trip property of test_properties.py, on PostgreSQL: any valid log reads back
event for event, a fork at any safe boundary copies exactly the prefix's rows, and the
summary rows agree with the logs. One schema (an empty store) per example."""

from __future__ import annotations

import itertools
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_harness import database_rows
from strategies import examples, logs
from test_properties import open_after

from forkwise.core.log.replay import replay
from forkwise.core.store.backends.postgres import PostgresBackend
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import SessionStore

_schemas = itertools.count(1)


@settings(examples(25, 400), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs(max_blocks=5), st.data())
def test_postgres_round_trip_and_fork_rows(
    pg_server: Any, drafts: list[dict[str, Any]], data: st.DataObject
) -> None:
    url = pg_server.create_schema(f"p{os.getpid()}_{next(_schemas)}")
    store = SessionStore(PostgresBackend(url))
    try:  # hypothesis may end an example at a draw: the connection is closed all the same
        store.create("src", cwd="/c")
        store.append("src", drafts)
        events = list(store.get("src").events)
        safe = [b for b in range(len(events) + 1) if not open_after(events, b)]
        b = data.draw(st.sampled_from(safe))
        store.fork("src", b, "child")
    finally:
        store.close()
    rows = database_rows(url)
    src_lines, child_lines = rows["src"][1], rows["child"][1]
    assert src_lines == tuple(e.encode() for e in events)
    assert child_lines[:b] == src_lines[:b]
    assert len(child_lines) == b + 1
    store = SessionStore(PostgresBackend(url))
    try:
        again = store.get("src")
        assert list(again.events) == events
        assert again.replay() == replay(events)
        child = store.get("child")
        assert child.replay().transcript == replay(events[:b]).transcript
        listed = {s.id: s for s in store.list()}
        assert listed["child"] == SessionSummary.start(child.header).fold(child.events)
        assert listed["src"] == SessionSummary.start(again.header).fold(again.events)
    finally:
        store.close()
