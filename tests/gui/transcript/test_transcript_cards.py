"""A card's document is made once and laid out again at another width: the view's width
changes as its scroll bar comes and goes, and every card was made anew (Markdown and
highlighting again) — twice per card when a long session opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from reading_scene import card_doc, opened, write_session

from forkwise.gui.transcript.transcript_delegate import MARGIN_Y, PAD

pytestmark = pytest.mark.gui


def test_a_card_keeps_its_document_across_widths(aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            view = app.window.transcript
            (answer,) = app.rows("assistant", "| step | file |")
            before = card_doc(app, answer)
            wide = before.textWidth()
            height = view.sizeHintForRow(answer)
            app.window.resize(760, app.window.height())
            await until(lambda: view.delegate._width() - 2 * PAD < wide, what="narrower")
            after = card_doc(app, answer)
            assert after is before  # laid out again, not made again
            assert after.textWidth() == view.delegate._width() - 2 * PAD
            assert view.sizeHintForRow(answer) > height  # narrower: taller
            assert view.sizeHintForRow(answer) == int(after.size().height()) + 2 * (
                PAD + MARGIN_Y)

    aloop(scenario())
