"""Keyboard-only use (the UX pass): Tab into the transcript of a session opened at its
end, arrow up to a question, open its menu with the Menu key, edit and resend. Real
window and store; the Menu key's event is made as Qt makes it (at the focus widget's
cursor rectangle, sent to the view)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from forkwise.core.reading.entries import USER
from forkwise.gui.domain.message_actions import EDIT_RESEND
from forkwise.gui.sessions.search_panel import HIT_ROLE

pytestmark = pytest.mark.gui

PLAN = "Plan the 2.5 release"


def menu_key(view: Any) -> None:
    """What Qt sends the focus widget for the Menu key (or Shift+F10)."""
    point = view.inputMethodQuery(Qt.InputMethodQuery.ImCursorRectangle).center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, point, view.mapToGlobal(point))
    QApplication.sendEvent(view, event)


async def searched(w: Any, words: str) -> Any:
    """Search all sessions for `words` as typed (Ctrl+Shift+F, the words, Enter): the
    results view, once it has hits."""
    w.action_search.trigger()
    box = w.search_panel.box
    await until(lambda: QApplication.focusWidget() is box, what="search focus")
    QTest.keyClicks(box, words)
    QTest.keyClick(box, Qt.Key.Key_Return)
    results = w.search_panel.results
    await until(lambda: results.model().rowCount() > 0, what="hits")
    return results


def test_edit_and_resend_from_the_keyboard(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            v = w.transcript
            await app.open(app.sid(PLAN))
            w.activateWindow()
            v.setFocus(Qt.FocusReason.TabFocusReason)
            await until(lambda: QApplication.focusWidget() is v, what="focus")
            start = v.currentIndex()
            # the current message is one the person sees
            assert start.isValid()
            assert v.viewport().rect().intersects(v.visualRect(start))
            assert start.row() > 0
            for _ in range(v.model().rowCount()):  # up to the nearest question
                entry = app.entries[v.currentIndex().row()]
                if entry.kind == USER:
                    break
                QTest.keyClick(v, Qt.Key.Key_Up)
            row = v.currentIndex().row()
            assert app.entries[row].kind == USER
            menu_key(v)
            menu = v.last_menu
            assert menu is not None
            # shown on that message, inside the view
            shown_at = QRect(v.viewport().mapToGlobal(v.viewport().rect().topLeft()),
                             v.viewport().size())
            assert shown_at.contains(menu.pos())
            edit = next(a for a in menu.actions() if a.objectName() == EDIT_RESEND)
            assert edit.isEnabled()
            edit.trigger()
            await until(lambda: w.composer.editing_message is not None, what="editing")
            assert w.composer.editing_message == app.entries[row].message_id
            assert w.composer.edit.toPlainText() == app.entries[row].text
            QTest.keyClick(w.composer.edit, Qt.Key.Key_Escape)  # Escape leaves the edit
            await until(lambda: w.composer.editing_message is None, what="edit cancelled")
            assert c.current == app.sid(PLAN)

    aloop(scenario())


def test_search_fields_answer_escape_and_down(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            w.activateWindow()
            # the tree's filter: Escape clears it (the rows come back), Down goes to them
            w.action_find.trigger()
            QTest.keyClicks(w.filter_box, "tabs vs")
            await until(lambda: c.proxy.pattern == "tabs vs", what="filtered")
            QTest.keyClick(w.filter_box, Qt.Key.Key_Escape)
            assert w.filter_box.text() == ""
            await until(lambda: not c.proxy.pattern, what="cleared")
            assert app.sid(PLAN)  # every row is back
            QTest.keyClick(w.filter_box, Qt.Key.Key_Down)
            assert QApplication.focusWidget() is w.tree
            # Search all sessions: Enter searches, Down goes to the hits, Enter opens one
            results = await searched(w, "changelog")
            box = w.search_panel.box
            QTest.keyClick(box, Qt.Key.Key_Down)
            assert QApplication.focusWidget() is results
            hit = results.currentIndex().data(HIT_ROLE)
            QTest.keyClick(results, Qt.Key.Key_Return)
            await until(lambda: c.current == hit["sessionId"], what="the hit opened")
            # Escape: first clears the words, then closes the panel, back to the list
            box.setFocus()
            QTest.keyClick(box, Qt.Key.Key_Escape)
            assert box.text() == ""
            QTest.keyClick(box, Qt.Key.Key_Escape)
            assert not w.search_page.isVisible()
            assert QApplication.focusWidget() is w.tree

    aloop(scenario())


def test_a_new_session_or_fork_is_ready_to_write_in(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            w.activateWindow()
            w.tree.setFocus()
            before = set(c.tree.session_ids())
            QTest.keyClick(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
            new = await until(lambda: c.current not in before and c.current, what="new")
            # named as a new session (not by its id), and the keyboard is in the composer
            assert c.tree.title_of(new) == "New session"
            assert w.header_label.text().startswith("New session")
            assert new in w.header_label.toolTip()
            await until(lambda: QApplication.focusWidget() is w.composer.edit, what="focus")
            QTest.keyClicks(w.composer.edit, "Tabs or spaces?")
            QTest.keyClick(w.composer.edit, Qt.Key.Key_Return)
            await until(lambda: app.rows("user", "Tabs or spaces?"), what="sent")
            await until(lambda: c.tree.title_of(new) == "Tabs or spaces?", what="titled")
            # a fork from the toolbar's action: the same
            await app.idle()
            w.tree.setFocus()
            plan = app.sid(PLAN)
            await app.open(plan)
            w.tree.setFocus()
            QTest.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier
                           | Qt.KeyboardModifier.ShiftModifier)
            await until(lambda: c.current not in (plan, new) and c.current, what="fork")
            await until(lambda: QApplication.focusWidget() is w.composer.edit, what="focus")

    aloop(scenario())


def test_escape_in_the_search_results_goes_back_to_the_sessions(
    aloop: Any, tmp_path: Path
) -> None:
    """Enter on a hit opens it with the keyboard still in the results (to open the next
    one); Escape there closes the search, as its ✕ says, and the list has the keyboard
    (it did nothing: the person had to click ✕ or go back up to the box)."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            w.activateWindow()
            results = await searched(w, "changelog")
            QTest.keyClick(w.search_panel.box, Qt.Key.Key_Return)  # again: to the first hit
            assert QApplication.focusWidget() is results
            hit = results.currentIndex().data(HIT_ROLE)
            QTest.keyClick(results, Qt.Key.Key_Return)
            await until(lambda: c.current == hit["sessionId"], what="the hit opened")
            assert QApplication.focusWidget() is results
            QTest.keyClick(results, Qt.Key.Key_Escape)
            assert not w.search_page.isVisible()
            assert w.tree.isVisible()
            assert QApplication.focusWidget() is w.tree
            assert c.current == hit["sessionId"]  # what was opened stays open

    aloop(scenario())


def test_enter_on_a_session_in_the_list_goes_to_its_messages(
    aloop: Any, tmp_path: Path
) -> None:
    """Down the list to a session, Enter: the keyboard is in its messages, on one in view,
    and Up reads on (Enter did nothing: Tab, or the mouse, was the way in)."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            w.activateWindow()
            w.tree.setFocus(Qt.FocusReason.TabFocusReason)
            await until(lambda: QApplication.focusWidget() is w.tree, what="list focus")
            plan = app.sid(PLAN)
            QTest.keyClick(w.tree, Qt.Key.Key_Home)
            for _ in range(w.tree.model().rowCount()):  # down the list, as a person would
                if c.current == plan:
                    break
                QTest.keyClick(w.tree, Qt.Key.Key_Down)
                await app.idle()
            await app.open(plan)
            QTest.keyClick(w.tree, Qt.Key.Key_Return)
            v = w.transcript
            assert QApplication.focusWidget() is v
            start = v.currentIndex()
            assert start.isValid()
            assert v.viewport().rect().intersects(v.visualRect(start))
            QTest.keyClick(v, Qt.Key.Key_Up)
            assert v.currentIndex().row() == start.row() - 1
            assert c.current == plan

    aloop(scenario())


def mnemonic(text: str) -> str:
    """The letter after a lone `&` in a menu entry's text ("" when it has none)."""
    at = text.replace("&&", "").find("&")
    return text.replace("&&", "")[at + 1].lower() if at >= 0 else ""


def test_each_menu_entry_answers_its_own_letter(aloop: Any, tmp_path: Path) -> None:
    """Alt+S, then F forks: in the Session menu, Fork and Previous fork shared F (and
    Compare and Continue in shared C), so on a fork with a sibling (Previous fork
    enabled) the letter only moved between them."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            for menu in w.menus.values():
                letters = [mnemonic(a.text()) for a in menu.actions() if not a.isSeparator()]
                taken = [x for x in letters if x]
                assert len(taken) == len(set(taken)), (menu.objectName(), letters)
            plan = app.sid(PLAN)
            first = (await app.client.fork(plan))["id"]
            second = (await app.client.fork(plan))["id"]  # of the same point: siblings
            await until(lambda: second in c.tree.session_ids(), what="the forks listed")
            await app.open(second)
            assert w.features["branches"].previous.isEnabled()  # the sibling: Previous fork takes F too
            w.activateWindow()
            before = set(c.tree.session_ids())
            session = w.menus["menuSession"]
            session.popup(w.mapToGlobal(w.rect().center()))
            await until(session.isVisible, what="the Session menu")
            QTest.keyClick(session, Qt.Key.Key_F)
            await until(lambda: set(c.tree.session_ids()) - before, what="forked")
            assert not session.isVisible()
            (child,) = set(c.tree.session_ids()) - before
            assert (c.tree.summary(child) or {})["parentSession"] == second
            assert first in c.tree.session_ids()

    aloop(scenario())


def test_shift_f10_opens_the_menu_of_the_current_session_and_message(
    aloop: Any, tmp_path: Path
) -> None:
    """Shift+F10, the menu key of keyboards without a Menu key: the current session's menu
    in the list, the current message's in the transcript (Qt opens menus for the Menu key
    only, on X11 and Wayland: Shift+F10 did nothing, and Fork from here had no key)."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            plan = app.sid(PLAN)
            await app.open(plan)
            w.activateWindow()
            w.tree.setFocus(Qt.FocusReason.TabFocusReason)
            shift = Qt.KeyboardModifier.ShiftModifier
            QTest.keyClick(w.tree, Qt.Key.Key_F10, shift)
            menu = w.tree.last_menu
            assert menu is not None
            assert menu.isVisible()
            assert "actionForkSession" in [a.objectName() for a in menu.actions()]
            menu.close()
            v = w.transcript
            v.setFocus(Qt.FocusReason.TabFocusReason)
            row = app.rows(USER)[-1]
            v.setCurrentIndex(app.controller.transcript.index(row))
            QTest.keyClick(v, Qt.Key.Key_F10, shift)
            menu = v.last_menu
            assert menu is not None
            assert menu.isVisible()
            fork = next(a for a in menu.actions() if a.objectName() == "actionForkFromMessage")
            assert fork.isEnabled()  # the current message's menu: a question of a turn ended
            # shown on that message
            rect = v.visualRect(v.currentIndex())
            assert QRect(v.viewport().mapToGlobal(rect.topLeft()), rect.size()).contains(
                menu.pos())
            menu.close()

    aloop(scenario())
