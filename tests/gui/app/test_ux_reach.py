"""What a person reaches and sees (the UX second pass): the load-earlier control above
the first card, not over it; a Task call's subagent as a link on its card; the search
taking the session list's place instead of squeezing it. Real window and store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from long_scene import LONG, write_long
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")


def test_show_earlier_messages_sits_above_the_first_card(aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 3000)  # opened at its end: earlier turns are left to load

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await app.open(LONG)
            assert model.base > 0
            view.scrollToTop()
            button = await until(lambda: view.earlier_button.isVisible()
                                 and view.earlier_button, what="the button at the top")
            await app.idle()
            qt_events()
            first = view.visualRect(model.index(0))
            assert first.top() <= 0 < first.bottom()  # the first card is at the top
            card = QRect(view.viewport().mapTo(view, first.topLeft()), first.size())
            # the button and the first card do not overlap: the card is seen whole
            assert not button.geometry().intersects(card), (button.geometry(), card)
            assert button.geometry().bottom() < card.top()
            assert view.rect().contains(button.geometry())
            SHOTS and view.grab().save(str(Path(SHOTS) / "earlier-button.png"))
            # scrolled down, the strip goes with the button: the cards use the room
            view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
            await until(lambda: not view.earlier_button.isVisible(), what="button hidden")
            assert view.viewportMargins().top() == 0

    aloop(scenario())


def test_a_task_call_shows_its_subagent_as_a_link_on_its_card(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from task_scene import PROMPT, claude_task_session, open_task_call

    from forkwise.gui.transcript.subagent_link import SubagentLink
    from forkwise.gui.transcript.transcript_delegate import MARGIN_X, MARGIN_Y

    projects = claude_task_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            view = w.transcript
            w.install_agents()
            parent, child, task = await open_task_call(app, projects)
            index = c.transcript.index(task)
            link = await until(lambda: view.indexWidget(index), what="the link on the card")
            assert isinstance(link, SubagentLink)
            await app.idle()
            qt_events()
            assert link.isVisible()
            assert PROMPT in link.text()
            assert link.accessibleName().startswith("Open subagent")
            card = view.visualRect(index).adjusted(MARGIN_X, MARGIN_Y, -MARGIN_X, -MARGIN_Y)
            assert card.contains(link.geometry()), (card, link.geometry())  # on the card
            # the card's text is still painted above the link (the call and its result)
            image = view.viewport().grab().toImage()
            text_band = [image.pixelColor(x, y).lightness() < 120
                         for y in range(card.top() + 8, link.geometry().top() - 2)
                         for x in range(card.left() + 8, card.right() - 8, 3)]
            assert any(text_band)
            SHOTS and view.grab().save(str(Path(SHOTS) / "subagent-link.png"))
            # no link on a card whose call started nothing
            for row in range(len(app.entries)):
                if row != task:
                    assert not isinstance(view.indexWidget(c.transcript.index(row)),
                                          SubagentLink)
            # a click opens the subagent
            link.click()
            await until(lambda: c.current == child, what="the subagent opened")
            # and from the keyboard: Enter on the row opens it (the link is not a Tab stop:
            # Tab goes on to the composer)
            await app.open(parent)
            link = await until(lambda: view.indexWidget(c.transcript.index(task)),
                               what="the link again")
            view.setFocus(Qt.FocusReason.TabFocusReason)
            QTest.keyClick(view, Qt.Key.Key_Tab)
            assert QApplication.focusWidget() is app.window.composer.edit
            assert not link.focusPolicy() & Qt.FocusPolicy.TabFocus
            view.setFocus(Qt.FocusReason.TabFocusReason)
            view.setCurrentIndex(c.transcript.index(task))
            QTest.keyClick(view, Qt.Key.Key_Return)
            await until(lambda: c.current == child, what="opened by Enter")

    aloop(scenario())


@pytest.mark.parametrize("size", [(560, 560), (1280, 800)])
def test_the_search_takes_the_session_lists_place_without_squeezing_it(
        aloop: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.resize(*size)
            await app.idle()
            qt_events()
            tree_width = w.tree.width()
            assert tree_width >= 200
            w.show_search()
            qt_events()
            panel = w.search_panel
            QTest.keyClicks(panel.box, "release")
            await until(lambda: panel.model.rowCount() > 0, what="hits")
            await app.idle()
            qt_events()
            SHOTS and w.grab().save(str(Path(SHOTS) / f"search-{size[0]}x{size[1]}.png"))
            # the results are usable, the tree is not squeezed beside them, the transcript
            # keeps room for a card
            assert panel.results.isVisible()
            assert panel.results.width() >= 200
            assert not w.tree.isVisible() or w.tree.width() >= 200, w.tree.width()
            view = w.transcript
            assert view.isVisible()
            assert view.width() >= view.minimumSizeHint().width()
            # closed (Escape twice: the words, then the panel), the list is back as it was
            QTest.keyClick(panel.box, Qt.Key.Key_Escape)
            QTest.keyClick(panel.box, Qt.Key.Key_Escape)
            qt_events()
            assert not panel.isVisible()
            assert w.tree.isVisible()
            assert w.tree.width() == tree_width
            assert QApplication.focusWidget() is w.tree

    aloop(scenario())
