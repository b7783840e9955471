"""Deleting is easy to take back (issue 34, item 8), on imported Claude Code files: the
banner names the deleted fork by its own title, Edit → Undo (Ctrl+Z) takes back the last
delete or rename while the app runs, and Session → Trash… lists the deleted sessions to
restore one or empty them for good, through the verbs the CLI uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import App, open_app, until
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton
from rewound_scene import SID, claude_rewound_twice

from forkwise.core.client.titles import forks_of

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
MAIN = f"claude-{SID}"


async def imported(app: App, tmp_path: Path) -> list[str]:
    """The rewound Claude Code session imported: its two branches, oldest first."""
    path = claude_rewound_twice(tmp_path / "claude")
    report = await app.client.import_files([str(path)])
    assert not report["failed"], report
    tree = app.controller.tree
    await until(lambda: MAIN in tree.session_ids(), what="imported rows")
    await app.idle()
    forks = forks_of(MAIN, tree.summary, tree.children_of)
    assert len(forks) == 2
    # each named by the question it asked of its own, once that is read
    await until(lambda: all(s in tree.questions for s in forks), what="their questions")
    return forks


def test_delete_names_the_fork_and_edit_undo_takes_it_back(
        aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            first, _second = await imported(app, tmp_path)
            own = c.tree.title_of(first)
            assert own == "check the signing step — fork 1"
            undo = w.action("actionUndo")
            assert not undo.isEnabled()  # nothing done yet
            await app.open(first)
            w.tree.setFocus()
            qtbot.keyClick(w.tree, Qt.Key.Key_Delete)
            await until(lambda: first not in c.tree.session_ids(), what="deleted")
            await app.idle()
            # the banner names the fork, not the session it came from
            assert w.banner.label.text() == f"“{own}” moved to the trash."
            assert undo.isEnabled()
            assert undo.text() == f"&Undo delete of “{own}”"
            w.banner.hide()  # the banner's Undo is gone: Edit → Undo is not
            w.activateWindow()
            await until(lambda: QApplication.activeWindow() is w, what="window active")
            # in the message box, Ctrl+Z is the text's own undo
            await app.open(MAIN)
            w.composer.edit.setFocus()
            QTest.keyClicks(w.composer.edit, "typo")
            QTest.keyClick(w.composer.edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
            await app.idle()
            assert w.composer.text() != "typo"
            assert first not in c.tree.session_ids()
            assert undo.isEnabled()
            QTest.keyClick(w.tree, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
            await until(lambda: first in c.tree.session_ids(), what="back")
            await app.idle()
            assert c.tree.title_of(first) == own
            assert not undo.isEnabled()
            assert not list((app.store_dir / "trash").iterdir())

            # a rename is taken back too: the fork is named as before
            branches = w.features["branches"]
            branches.rename_to(first, "Signing certificate")
            await until(lambda: c.tree.title_of(first) == "Signing certificate", what="renamed")
            await app.idle()
            assert undo.text() == f"&Undo rename of “{own}”"
            undo.trigger()
            await until(lambda: c.tree.title_of(first) == own, what="rename undone")

    aloop(scenario())


def test_the_trash_window_restores_and_empties(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            first, second = await imported(app, tmp_path)
            titles = {sid: c.tree.title_of(sid) for sid in (first, second)}
            keeping = w.features["housekeeping"]
            for sid in (first, second):
                keeping.delete(sid)
                await until(lambda s=sid: s not in c.tree.session_ids(), what="deleted")
            await app.idle()
            trash_action = w.action("actionShowTrash")
            assert trash_action in w.menus["menuSession"].actions()
            trash_action.trigger()
            dialog = keeping.trash
            assert dialog is not None
            await until(lambda: dialog.list.topLevelItemCount() == 2, what="the trash listed")
            shown = [dialog.list.topLevelItem(i).text(0) for i in range(2)]
            assert shown == [titles[second], titles[first]]  # the latest deleted first
            assert all(dialog.list.topLevelItem(i).text(1) for i in range(2))  # when
            if SHOTS:
                dialog.grab().save(str(Path(SHOTS) / "trash.png"))
            dialog.list.clearSelection()
            dialog.list.topLevelItem(1).setSelected(True)
            assert dialog.selected() == [first]
            assert dialog.restore_button.isEnabled()
            dialog.restore_button.click()
            await until(lambda: first in c.tree.session_ids(), what="restored")
            await until(lambda: dialog.list.topLevelItemCount() == 1, what="listed again")
            assert c.tree.title_of(first) == titles[first]
            dialog.empty_button.click()
            box = dialog.confirm
            assert isinstance(box, QMessageBox)
            confirm = box.findChild(QPushButton, "confirmEmptyTrash")
            assert confirm is not None
            confirm.click()
            await until(lambda: dialog.list.topLevelItemCount() == 0, what="emptied")
            await app.idle()
            assert dialog.note.text() == "The trash is empty."
            assert not list((app.store_dir / "trash").iterdir())
            assert second not in c.tree.session_ids()
            assert await app.client.list_trash() == []

    aloop(scenario())
