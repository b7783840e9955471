"""The cold-start preview and the host's listing put sessions in one order: last activity,
then id (sessions whose logs end at the same instant — an import's, a script's — are not
shuffled when the listing replaces the preview's rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from forkwise.core.bench.synth import write_store
from forkwise.core.client.local import indexed_rows, open_store, save_index_head
from forkwise.core.runtime.listing import activity_key
from forkwise.gui.models.session_model import SessionTreeModel
from forkwise.gui.models.session_rows import ACTIVITY, ID_ROLE

pytestmark = pytest.mark.gui
PAGE = 5


async def listed_rows(store: Path) -> list[dict[str, Any]]:
    opened = await open_store(store, serve=False)
    try:
        return await opened.client.list_sessions()
    finally:
        await opened.close()


def top_ids(model: SessionTreeModel) -> list[str]:
    return [model.index(r, 0).data(ID_ROLE) for r in range(model.rowCount())]


def test_the_preview_and_the_listing_order_ties_alike(aloop: Any, tmp_path: Path) -> None:
    store = write_store(tmp_path / "store", 30, 12)  # logs that end at the same instants
    rows = aloop(listed_rows(store))  # the host lists: the index is written
    assert save_index_head(store)  # as the app leaves it: the next start reads its head
    ties = len(rows) - len({row["updated"] for row in rows})
    assert ties >= PAGE  # the store has the case this is about
    expected = [row["id"] for row in sorted(rows, key=activity_key, reverse=True)]

    # the whole index (a window sorted by another column reads it all) comes in that order
    assert [row["id"] for row in indexed_rows(store)] == expected
    preview = indexed_rows(store, PAGE)
    # the preview rows come newest first, by the one rule
    assert [row["id"] for row in preview] == expected[:PAGE]
    model = SessionTreeModel(page_rows=PAGE)
    model.sort(ACTIVITY, Qt.SortOrder.DescendingOrder)
    model.load(preview)
    shown = top_ids(model)
    assert shown == expected[:PAGE]
    model.merge(rows)  # the host's listing arrives
    model.fetch_all()
    assert top_ids(model)[:PAGE] == shown  # the rows in view stay where they were
    assert top_ids(model) == expected
    # a load of the listing alone (no preview) comes in the same order
    fresh = SessionTreeModel(page_rows=PAGE)
    fresh.sort(ACTIVITY, Qt.SortOrder.DescendingOrder)
    fresh.load(rows)
    fresh.fetch_all()
    assert top_ids(fresh) == expected
    # oldest first is the same order reversed
    fresh.sort(ACTIVITY, Qt.SortOrder.AscendingOrder)
    assert top_ids(fresh) == expected[::-1]
