"""What a person met when using the app on a real store (the UX pass): a long session
title that took the window's width, dates cut in the Last activity column. Real window,
real store on disk."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QPushButton, QStyle

from forkwise.gui.models.session_rows import ACTIVITY, format_when

pytestmark = pytest.mark.gui

PLAN = "Plan the 2.5 release"
SHORTER = "2.5 release — two-week schedule"
LONG = ("Refactor the payment reconciliation service so that partial refunds across "
        "multiple currencies are reconciled against the ledger every night at two")


def settle() -> None:
    """Let pending layout requests run, as they would before the next frame."""
    for _ in range(3):
        qt_events()


def _inside(widget: Any, window: Any) -> bool:
    """`widget` is drawn wholly inside `window`'s client area."""
    top_left = widget.mapTo(window, widget.rect().topLeft())
    bottom_right = widget.mapTo(window, widget.rect().bottomRight())
    return window.rect().contains(top_left) and window.rect().contains(bottom_right)


def test_a_long_title_does_not_push_the_panes_aside(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            plan = app.sid(PLAN)
            await app.client.rename_session(plan, LONG)
            await until(lambda: c.tree.title_of(plan) == LONG, what="renamed")
            tree_width = w.tree.width()
            await app.open(plan)
            await app.idle()
            settle()
            assert w.tree.width() == tree_width  # the session list kept its width
            assert _inside(w.composer.send_button, w)
            assert _inside(w.transcript, w)
            assert w.header_label.minimumSizeHint().width() < w.width() // 2
            # the whole title is kept (and a hover away), only its drawing is elided
            assert w.header_label.text().startswith(LONG)
            assert LONG in w.header_label.toolTip()
            # a fork of it keeps its "— fork 1" in view: elided in the middle, as the tree
            fork = (await app.client.fork(plan))["id"]
            await until(lambda: c.tree.summary(fork) is not None, what="the fork listed")
            await app.open(fork)
            text = w.header_label.text()
            shown = w.header_label.fontMetrics().elidedText(
                text, w.header_label.mode, w.header_label.contentsRect().width())
            assert "…" in shown
            assert " — fork " in shown

    aloop(scenario())


def test_last_activity_shows_whole_dates(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            await app.open(app.sid(SHORTER))
            style = w.tree.style()
            margin = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin,
                                            None, w.tree) + 1)
            room = w.tree.header().sectionSize(ACTIVITY) - 2 * margin
            metrics = w.tree.fontMetrics()
            shown = []
            for row in range(c.proxy.rowCount(QModelIndex())):
                text = c.proxy.index(row, ACTIVITY).data(Qt.ItemDataRole.DisplayRole)
                shown.append(text)
                assert metrics.horizontalAdvance(text) <= room, text
            assert any(shown)
            # and any month of the year, not just this store's
            year = datetime.now().year
            months = [datetime(year, m, 28, 23, 59).astimezone() for m in range(1, 13)]
            # (an earlier year's dates: once a row shows one, test_dates_and_layout)
            for text in [format_when(d.isoformat()) for d in months]:
                assert metrics.horizontalAdvance(text) <= room, text

    aloop(scenario())


def test_a_small_window_keeps_messages_whole(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid("Clean up the build folder"))  # waits for an approval
            # a small window whose session list keeps the width it had (a restored
            # splitter, or a person who widened the list)
            w.resize(640, 420)
            await until(lambda: w.width() <= 640, what="resized")
            w.splitter.setSizes([440, 200])
            settle()
            await app.idle()
            settle()
            # messages wrap to the pane: nothing cut off behind a horizontal scroll bar
            assert w.transcript.horizontalScrollBar().maximum() == 0
            assert _inside(w.composer.send_button, w)
            deny = w.transcript.viewport().findChild(QPushButton, "denyButton")
            assert deny is not None
            assert deny.isVisible()
            assert w.transcript.viewport().rect().contains(
                deny.mapTo(w.transcript.viewport(), deny.rect().bottomRight()))
            assert w.tree.width() < 440  # the list gave way

    aloop(scenario())


def test_an_unreadable_session_is_not_called_new(aloop: Any, tmp_path: Path) -> None:
    from forkwise.core.demo import build_demo_store

    store = tmp_path / "store"
    build_demo_store(store)
    (store / "sessions" / "garbage.jsonl").write_bytes(b"not a session\n")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, w = app.controller, app.window
            await until(lambda: c.tree.summary("garbage") is not None, what="listed")
            assert c.tree.title_of("garbage") == "garbage"
            w.select_session("garbage")
            await until(lambda: c.current == "garbage", what="selected")
            await app.idle()
            assert w.header_label.text().startswith("garbage — cannot be read")
            # nothing can be written to it, and the composer says so
            assert not w.composer.edit.isEnabled()
            assert not w.composer.send_button.isEnabled()
            assert "cannot be read" in w.composer.edit.placeholderText()
            readable = next(s for s in c.tree.session_ids() if not c.tree.summary(s).get("error"))
            w.select_session(readable)
            await until(lambda: c.current == readable, what="a readable one selected")
            await app.idle()
            assert w.composer.edit.isEnabled()
            assert w.composer.send_button.isEnabled()
            # a session nothing was asked in yet is the one called new
            made = await app.client.create_session()
            await until(lambda: c.tree.summary(made["id"]) is not None, what="made")
            assert c.tree.title_of(made["id"]) == "New session"

    aloop(scenario())
