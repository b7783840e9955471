"""Dialogs as a person meets them (the UX pass): a failed import says which file and why,
naming it once; the dialog is driven from the keyboard (Enter imports, Escape closes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit

from forkwise.gui.features.agents.import_dialogs import ImportDialog

pytestmark = pytest.mark.gui


def dialog_of(kind: type) -> Any:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
    return found[-1] if found else None


def test_a_failed_import_names_each_file_once(aloop: Any, tmp_path: Path) -> None:
    bad = tmp_path / "downloads"
    bad.mkdir()
    corrupt = bad / "session-cut-short.jsonl"  # a copy that stopped mid-line
    corrupt.write_bytes(b'{"type":"user","message":{"role":"user","content":"hi"\n\x00\x01\n')
    missing = tmp_path / "no-such-folder"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            app.window.findChild(type(app.window.action_new), "actionImport").trigger()
            dialog = await until(lambda: dialog_of(ImportDialog), what="import dialog")
            await app.idle()  # the tools' folders looked up (they prefill the field)
            for path in (corrupt, missing):
                dialog.path.setText(str(path))
                QTest.keyClick(dialog.path, Qt.Key.Key_Return)  # Enter imports
                await until(lambda: "could not be imported" in dialog.summary.text(),
                            what="the failure")
                text = dialog.summary.text()
                assert text.count(str(path)) == 1, text
                assert text.startswith("0 sessions imported")
                dialog.summary.setText("")
            QTest.keyClick(dialog.path, Qt.Key.Key_Escape)  # Escape closes
            await until(lambda: not dialog.isVisible(), what="closed")

    aloop(scenario())


def test_rename_shows_the_whole_title_and_answers_enter(aloop: Any, tmp_path: Path) -> None:
    title = "Plan the 2.5 release: freeze on day 1, RC on day 4, publish on day 12"

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            plan = app.sid("Plan the 2.5 release")
            await app.client.rename_session(plan, title)
            await until(lambda: c.tree.title_of(plan) == title, what="renamed")
            await app.open(plan)
            w.features["branches"].rename.trigger()
            dialog = await until(lambda: dialog_of(QInputDialog), what="rename dialog")
            field = dialog.findChild(QLineEdit)
            await until(field.isVisible, what="shown")
            assert field.text() == title
            # the whole title is in view in the field
            assert field.fontMetrics().horizontalAdvance(title) < field.width() - 8
            field.selectAll()
            QTest.keyClicks(field, "Ship 2.5 in May")
            QTest.keyClick(field, Qt.Key.Key_Return)  # Enter renames
            await until(lambda: c.tree.title_of(plan) == "Ship 2.5 in May", what="renamed")

    aloop(scenario())


def test_the_compare_window_closes_with_escape(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid("2.5 release — two-week schedule"))
            w.features["branches"].compare_with_source()
            view = await until(lambda: w.features["branches"].compare_view is not None
                               and w.features["branches"].compare_view.isVisible()
                               and w.features["branches"].compare_view, what="compare window")
            view.activateWindow()
            view.setFocus()
            await until(lambda: QApplication.activeWindow() is view, what="active")
            QTest.keyClick(view, Qt.Key.Key_Escape)
            await until(lambda: not view.isVisible(), what="closed")

    aloop(scenario())


def test_a_pi_session_is_recognised_by_the_import_dialog(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            # a pi session file as pi writes it (the export writes pi's format)
            out = tmp_path / "pi-sessions" / "plan.jsonl"
            out.parent.mkdir()
            await app.client.export_session(app.sid("Plan the 2.5 release"), "pi", str(out))
            app.window.findChild(type(app.window.action_new), "actionImport").trigger()
            dialog = await until(lambda: dialog_of(ImportDialog), what="import dialog")
            await app.idle()
            assert dialog.tool.currentData() is None  # "Recognise each file"
            dialog.path.setText(str(out.parent))
            QTest.keyClick(dialog.path, Qt.Key.Key_Return)
            await until(lambda: "imported" in dialog.summary.text(), what="the summary")
            text = dialog.summary.text()
            assert text.startswith("1 sessions imported"), text
            assert "newer Forkwise" not in text
            await until(lambda: [s for s in c.tree.session_ids()
                                 if (c.tree.summary(s) or {}).get("source") == "pi"],
                        what="the pi session listed")

    aloop(scenario())
