"""Titles with no room keep what tells them apart (issue 34, item 7): Codex sessions whose
first prompts share a long start and a long end all read alike when cut in the middle;
the list shows each from where it parts from its neighbours."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from codex_fixtures import Rollout, thread_id
from gui_harness import open_app, until
from PySide6.QtCore import Qt

from forkwise.gui.domain.title_elision import differing_start
from forkwise.gui.models.session_rows import TITLE
from forkwise.gui.sessions.title_delegate import TitleDelegate

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
SERVICES = ("billing", "payments", "notifications")


def prompt(service: str) -> str:
    # under 80 characters: the Codex importer keeps the whole prompt as the title
    return f"Run the tests of packages/backend/services/{service} and fix what fails"


def test_the_part_shown_starts_where_titles_part() -> None:
    a, b = prompt("billing"), prompt("payments")
    start = differing_start(a, [b])
    assert 0 < start < a.index("billing")
    assert a[start:].startswith("backend/services/billing")  # from a path part: context
    assert differing_start("Plan the release", ["Plan the rollout"]) == 0  # short: as it is
    assert differing_start(a, [a, ""]) == 0  # only itself, or nothing, around it


def test_codex_rows_that_share_their_start_keep_what_differs(
        aloop: Any, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    paths = []
    for n, service in enumerate(SERVICES, start=60):
        rollout = Rollout(thread_id(n)).meta()
        rollout.turn(prompt(service), "Fixed: the fixture used the wrong currency.",
                     first=True)
        paths.append(rollout.write(home))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(p) for p in paths])
            assert not report["failed"], report
            w, tree = app.window, app.controller.tree
            await until(lambda: len(tree.session_ids()) == 3, what="imported rows")
            await app.idle()
            w.tree.setColumnWidth(TITLE, 260)
            model = w.tree.model()
            delegate = w.tree.itemDelegateForColumn(TITLE)
            assert isinstance(delegate, TitleDelegate)
            metrics = w.tree.fontMetrics()
            room = 220
            rows = [model.index(r, TITLE) for r in range(model.rowCount())]
            titles = [str(i.data()) for i in rows]
            assert sorted(titles) == sorted(prompt(s) for s in SERVICES)
            # cut in the middle, as the list did, all three read the same
            middle = {metrics.elidedText(t, Qt.TextElideMode.ElideMiddle, room) for t in titles}
            assert len(middle) == 1
            shown = [delegate.shown_text(i, t, metrics, room) for i, t in zip(rows, titles,
                                                                                strict=True)]
            assert len(set(shown)) == 3, shown
            for text, title in zip(shown, titles, strict=True):
                service = next(s for s in SERVICES if s in title)
                assert service in text, text
                assert text.startswith("…")
                assert metrics.horizontalAdvance(text) <= room
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "titles-keep-what-differs.png"))

    aloop(scenario())
