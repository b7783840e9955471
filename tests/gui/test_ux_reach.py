"""What a person reaches and sees (the UX second pass): the load-earlier control above
the first card, not over it; a Task call's subagent as a link on its card; the search
taking the session list's place instead of squeezing it. Real window and store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication
from test_transcript_scroll import LONG, write_long

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
            QApplication.processEvents()
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
