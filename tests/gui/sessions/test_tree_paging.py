"""The session tree hands its top-level rows to the view a page at a time: the first page
paints at once, the rest follows right after that frame, and anything that needs a row
not fetched yet (selecting it, filtering) fetches it first."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QModelIndex

from forkwise.core.bench.synth import write_store
from forkwise.core.runtime.listing import activity_key
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from forkwise.gui.models import session_model
from forkwise.gui.models.session_model import SessionTreeModel
from forkwise.gui.models.session_rows import ID_ROLE

pytestmark = pytest.mark.gui

SESSIONS = 90  # more than a screen of rows (the window is 1280x800)


@dataclass
class Paging:
    #: the session forked: the last row by activity (beyond the first screen)
    forked: str
    #: the rows each load handed to the view
    at_load: list[int] = field(default_factory=list)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paging:
    """A store of more rows than fit on screen, in pages of 5, with a fork of its least
    recently active session; records the rows each load hands to the view. The synthetic
    logs end at about the same time: which one is last is the rows' tie rule (last
    activity, then id), so it is asked of that rule, not named."""
    root = write_store(tmp_path / "store", SESSIONS, 12)
    backend = SessionStore(JsonlBackend(root))
    try:
        oldest = min((s.to_dict() for s in backend.list()), key=activity_key)
        backend.fork(oldest["id"])
    finally:
        backend.close()
    monkeypatch.setattr(session_model, "PAGE_ROWS", 5)
    paging = Paging(oldest["id"])
    load = SessionTreeModel.load

    def recording_load(self: SessionTreeModel, summaries: Any) -> None:
        load(self, summaries)
        paging.at_load.append(self.rowCount())

    monkeypatch.setattr(SessionTreeModel, "load", recording_load)
    return paging


def top_ids(model: Any) -> list[str]:
    return [model.index(r, 0).data(ID_ROLE) for r in range(model.rowCount())]


def test_first_page_then_every_row_after_the_first_frame(
        aloop: Any, tmp_path: Path, store: Paging) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, w = app.controller, app.window
            assert store.at_load == [5]
            await until(lambda: c.tree.rowCount() == SESSIONS, what="the rest, after a frame")
            assert not c.tree.canFetchMore(QModelIndex())
            assert top_ids(c.proxy) == c.tree.children_of(None)
            # the lineage in rows fetched later is expanded as well
            assert c.tree.children_of(store.forked)
            assert top_ids(c.tree).index(store.forked) > 50  # beyond the first screen
            assert w.tree.isExpanded(c.proxy.mapFromSource(c.tree.index_for(store.forked)))
            assert w.selected_session() == top_ids(c.tree)[0]  # the first row, as before

    aloop(scenario())


def test_selecting_or_filtering_fetches_the_rows_needed(
        aloop: Any, tmp_path: Path, store: Paging) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, w = app.controller, app.window
            await until(lambda: c.tree.rowCount() == SESSIONS, what="every row")
            rows = list(app.client.catalogue.values())
            last = c.tree.children_of(None)[-1]
            c._started(rows)  # a load again: the rest is not fetched until the next frame
            assert c.tree.rowCount() < SESSIONS
            assert not c.tree.index_for(last).isValid()
            w.select_session(last)
            assert w.selected_session() == last
            assert c.current == last
            await app.idle()

            c._started(rows)
            assert not c.tree.index_for(last).isValid()
            title = str(c.tree.summary(last)["title"])  # type: ignore[index]
            c.search(title)  # what the filter box does once typing pauses
            assert last in top_ids(c.proxy)  # at once, not when the view asks for more
            await app.idle()
            c.search("")
            assert c.tree.rowCount() == SESSIONS

    aloop(scenario())
