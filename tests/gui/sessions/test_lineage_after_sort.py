"""Forks stay expanded beneath their source when the sort changes before every tree row
is fetched: a source that the new order brings into the fetched rows is expanded too
(and one a person collapsed stays collapsed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from gui_harness import open_app, until
from PySide6.QtCore import Qt

from forkwise.core.bench.synth import write_store
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from forkwise.gui.models import session_model
from forkwise.gui.models.session_rows import ACTIVITY, ID_ROLE

pytestmark = pytest.mark.gui

SESSIONS = 60
PAGE = 5  # top-level rows per fetch: the store is many pages


@pytest.fixture
def oldest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store of many pages whose oldest session has a fork; returns that session."""
    root = write_store(tmp_path / "store", SESSIONS, 12)
    last_ts = {}
    for path in (root / "sessions").glob("*.jsonl"):
        last_ts[path.stem] = orjson.loads(path.read_bytes().splitlines()[-1])["ts"]
    source = min(last_ts, key=lambda sid: (last_ts[sid], sid))
    backend = SessionStore(JsonlBackend(root))
    try:
        backend.fork(source)
    finally:
        backend.close()
    monkeypatch.setattr(session_model, "PAGE_ROWS", PAGE)
    return source


def top_ids(model: Any) -> list[str]:
    return [model.index(r, 0).data(ID_ROLE) for r in range(model.rowCount())]


def test_a_sort_before_every_row_is_fetched_keeps_forks_expanded(
        aloop: Any, tmp_path: Path, oldest: str) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, w = app.controller, app.window
            await until(lambda: c.tree.rowCount() == SESSIONS, what="every row")
            assert c.tree.children_of(oldest)  # its fork is beneath it
            c._started(list(app.client.catalogue.values()))  # a load: one page of rows
            assert oldest not in top_ids(c.tree)  # newest first: it is on a later page

            w.tree.sortByColumn(ACTIVITY, Qt.SortOrder.AscendingOrder)  # oldest first
            assert c.tree.rowCount() < SESSIONS  # the rest is not fetched yet
            assert oldest in top_ids(c.tree)  # the new order brought it into the first page
            await until(lambda: c.tree.rowCount() == SESSIONS, what="the rest of the rows")
            await app.idle()
            index = c.proxy.mapFromSource(c.tree.index_for(oldest))
            assert index.isValid()
            assert w.tree.isExpanded(index)
            assert all(w.tree.isExpanded(c.proxy.mapFromSource(c.tree.index_for(sid)))
                       for sid in c.tree.lineage_parents())

            w.tree.collapse(index)  # what a click on its arrow does
            w.tree.sortByColumn(ACTIVITY, Qt.SortOrder.DescendingOrder)
            index = c.proxy.mapFromSource(c.tree.index_for(oldest))
            assert not w.tree.isExpanded(index)  # a row a person collapsed stays collapsed

    aloop(scenario())
