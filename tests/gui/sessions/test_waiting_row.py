"""The session list tells a session that waits for the person's approval from one that
runs: Last activity says so (its text, tooltip and accessible text name the tool), the
column is wide enough to show it, and the row changes back once the request is answered.
Real window, host and demo store; a screenshot of the list is saved beside the test's
files (`list.png`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import Qt

from forkwise.gui.models.session_rows import ACTIVITY, RUNNING_TEXT, TITLE, WAITING_TEXT

pytestmark = pytest.mark.gui
ACCESSIBLE = Qt.ItemDataRole.AccessibleTextRole


def test_the_list_says_which_session_needs_approval(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            tree, view = app.controller.tree, app.window.tree
            sid = app.sid("Clean up the build folder")
            cell = tree.index_for(sid, ACTIVITY)
            assert cell.data() == WAITING_TEXT
            assert cell.data(ACCESSIBLE) == "Waiting for your approval of read_file"
            assert "Waiting for your approval of read_file" in cell.data(
                Qt.ItemDataRole.ToolTipRole
            )
            assert tree.index_for(sid, TITLE).data(ACCESSIBLE).endswith(", needs your approval")
            others = [s for s in tree.session_ids() if s != sid]
            assert others
            assert all(
                tree.index_for(s, ACTIVITY).data() not in (WAITING_TEXT, RUNNING_TEXT)
                for s in others
            )
            # not cut short: the column fits the text (its first width is fitted to it)
            text = view.fontMetrics().horizontalAdvance(WAITING_TEXT)
            assert view.columnWidth(ACTIVITY) > text
            app.window.grab().save(str(tmp_path / "list.png"))
            # the open session's header says so too (it said "running")
            await app.open(sid)
            await until(lambda: WAITING_TEXT in app.window.header_label.text(),
                        what="the header")
            assert "running" not in app.window.header_label.text()

            info = await app.client.get_session(sid)
            approval = info["pendingApprovals"][0]["approval"]
            done = await app.client.approve_and_wait(sid, approval, True)
            assert done["status"] == "completed"
            await until(lambda: tree.index_for(sid, ACTIVITY).data() != WAITING_TEXT,
                        what="the row updated")
            assert tree.index_for(sid, ACTIVITY).data(ACCESSIBLE) is None
            assert "approval" not in tree.index_for(sid, ACTIVITY).data(
                Qt.ItemDataRole.ToolTipRole
            )
            await until(lambda: WAITING_TEXT not in app.window.header_label.text(),
                        what="the header updated")

    aloop(scenario())


def test_the_marks_are_in_the_font(aloop: Any, tmp_path: Path) -> None:
    """Each state's mark is a glyph of the list's font: one it lacks shows as an empty
    box (the pause sign did)."""
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            metrics = app.window.tree.fontMetrics()
            for text in (WAITING_TEXT, RUNNING_TEXT):
                assert metrics.inFontUcs4(ord(text[0])), text

    aloop(scenario())
