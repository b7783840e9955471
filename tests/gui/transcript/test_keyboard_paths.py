"""The keyboard in the reading pane: one Tab from the transcript to the message box, with
the keyboard's place shown on each stop; Ctrl+End takes the current message along; the
message menu and Continue in ▸ have access keys; typing a letter does not jump to a card.
Real window on the demo store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
FORK = "2.5 release — two-week schedule"  # a fork: its record links to its source


def access_keys(menu: QMenu) -> list[str]:
    """The access key of each entry (the letter after '&'), '' for one without."""
    keys = []
    for action in menu.actions():
        if action.isSeparator():
            continue
        text = action.text()
        at = text.find("&")
        keys.append(text[at + 1].lower() if 0 <= at < len(text) - 1 else "")
    return keys


def test_one_tab_from_the_transcript_to_the_message_box_with_focus_shown(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            for title in (FORK, "Plan the 2.5 release"):  # a fork record; a fork mark
                await app.open(app.sid(title))
                await app.idle()
                view = w.transcript
                assert any(view.indexWidget(app.controller.transcript.index(r))
                           for r in range(app.controller.transcript.rowCount()))
                w.activateWindow()
                view.clearFocus()
                qt_events()
                unfocused = view.viewport().grab().toImage()
                view.setFocus(Qt.FocusReason.TabFocusReason)
                qt_events()
                current = view.currentIndex()
                assert current.isValid()
                assert view.viewport().rect().intersects(view.visualRect(current))
                # the current message is marked on screen
                focused = view.viewport().grab().toImage()
                assert focused != unfocused, title
                if SHOTS:
                    focused.save(str(Path(SHOTS) / "transcript-focus.png"))
                QTest.keyClick(view, Qt.Key.Key_Tab)
                assert QApplication.focusWidget() is w.composer.edit, (
                    title, QApplication.focusWidget())
                QTest.keyClick(w.composer.edit, Qt.Key.Key_Backtab)
                assert QApplication.focusWidget() is view, title

    aloop(scenario())


def test_enter_on_a_fork_record_opens_its_source(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            fork = app.sid(FORK)
            await app.open(fork)
            view = app.window.transcript
            model = app.controller.transcript
            (row,) = [r for r in range(model.rowCount())
                      if type(view.indexWidget(model.index(r))).__name__ == "ForkHeader"]
            view.setFocus(Qt.FocusReason.TabFocusReason)
            view.setCurrentIndex(model.index(row))
            QTest.keyClick(view, Qt.Key.Key_Return)
            source = app.controller.tree.summary(fork)["parentSession"]  # type: ignore[index]
            await until(lambda: app.controller.current == source, what="the source opened")

    aloop(scenario())


def test_ctrl_end_takes_the_current_message_to_the_end(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.resize(900, 460)  # the session is longer than the transcript's height
            await app.open(app.sid("Plan the 2.5 release"))
            await app.idle()
            qt_events()
            view, model = w.transcript, app.controller.transcript
            bar = view.verticalScrollBar()
            assert bar.maximum() > 0
            view.setFocus(Qt.FocusReason.TabFocusReason)
            view.setCurrentIndex(model.index(0))
            view.scrollToTop()
            QTest.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
            await app.idle()
            qt_events()
            last = model.rowCount() - 1
            assert view.currentIndex().row() == last
            assert bar.value() == bar.maximum()
            QTest.keyClick(view, Qt.Key.Key_PageUp)
            qt_events()
            # a page up from the end, not back to the top where the current message was
            assert view.currentIndex().row() > 0
            assert bar.value() > 0
            assert bar.maximum() - bar.value() <= view.viewport().height() * 3 // 2

    aloop(scenario())


def test_the_message_menu_and_continue_in_have_access_keys(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            await app.open(app.sid("Plan the 2.5 release"))
            (answer, *_rest) = app.rows("assistant")
            menu = app.message_menu(answer)
            keys = access_keys(menu)
            assert all(keys), [a.text() for a in menu.actions()]
            assert len(set(keys)) == len(keys), keys
            (sub,) = [a.menu() for a in menu.actions() if a.menu() is not None]
            keys = access_keys(sub)
            assert all(keys), [a.text() for a in sub.actions()]
            assert len(set(keys)) == len(keys), keys
            menu.close()
            session = app.window.menus["menuSession"]
            (cont,) = [a.menu() for a in session.actions()
                       if a.menu() is not None and a.menu().objectName() == "menuContinueIn"]
            cont.aboutToShow.emit()
            keys = access_keys(cont)
            assert all(keys), [a.text() for a in cont.actions()]
            assert len(set(keys)) == len(keys), keys

    aloop(scenario())


def test_typing_a_letter_in_the_transcript_does_not_jump_to_a_card(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            await app.open(app.sid("Plan the 2.5 release"))
            view, model = app.window.transcript, app.controller.transcript
            view.setFocus(Qt.FocusReason.TabFocusReason)
            last = model.rowCount() - 1
            view.setCurrentIndex(model.index(last))
            # "W" starts the first question ("We want to ship 2.5…"), "D" a later one
            for letter in (Qt.Key.Key_W, Qt.Key.Key_D, Qt.Key.Key_A):
                QTest.keyClick(view, letter)
                qt_events()
                assert view.currentIndex().row() == last

    aloop(scenario())
