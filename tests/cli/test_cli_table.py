"""`sessions list`'s table keeps its columns in line whatever the ids and models are (an
imported session's id is up to 64 characters, a model name as long as its provider says)."""

from __future__ import annotations

import io
from pathlib import Path

from forkwise.core.cli import main as cli
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

LONG_ID = "claude-0000003c-0000-4000-8000-000000000000-00000034-0000-4000-8"
LONG_MODEL = "claude-sonnet-4-5-20250929-extended"


def test_columns_line_up_with_a_long_id_and_model(tmp_path: Path) -> None:
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        store.create("short", cwd="/w")
        store.create(LONG_ID, cwd="/w")
        store.append(LONG_ID, [{"type": "model/select", "provider": "p", "model": LONG_MODEL}])
    finally:
        store.close()
    out = io.StringIO()
    assert cli.main(["sessions", "list", "--store", str(tmp_path)], out=out) == 0
    header, *rows = out.getvalue().splitlines()
    assert len(LONG_ID) == 64
    assert len(rows) == 2
    events_end = header.index("EVENTS") + len("EVENTS")
    title_at = header.index("TITLE")
    for row in rows:
        assert row[events_end - 1 : events_end + 1].lstrip("0123456789") == " ", row  # aligned
        assert row[title_at - 1 : title_at + 1].startswith(" "), row  # titles start together
        assert row[title_at] != " ", row
    assert {row.split()[0] for row in rows} == {"short", LONG_ID}
