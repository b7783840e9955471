"""A transcript that follows the conversation: every session opens at its end, a pending
approval is fully in view, new output keeps a reader at the bottom there and leaves one who
scrolled up in place (with a "new messages" pill), Ctrl+End reaches the real end."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path
from typing import Any

import pytest
from gui_harness import App, open_app, until
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QWidget

from forkwise.core.bench.synth import session_lines
from forkwise.core.runtime.providers import offline as offline_module

pytestmark = pytest.mark.gui
LONG = "long-session"
SHOTS = os.environ.get("FORKWISE_SHOTS")  # a folder: the tests save what they looked at


def write_long(root: Path, events: int) -> None:
    sessions = root / "store" / "sessions"
    sessions.mkdir(parents=True, mode=0o700, exist_ok=True)
    lines = session_lines(random.Random(5), LONG, events)
    (sessions / f"{LONG}.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def in_view(app: App, row: int) -> bool:
    view = app.window.transcript
    rect = view.visualRect(app.controller.transcript.index(row))
    return rect.isValid() and view.viewport().rect().contains(QRect(rect))


def approval_box(app: App) -> QWidget | None:
    boxes = [w for w in app.window.transcript.viewport().findChildren(QWidget, "approvalBox")
             if w.isVisible()]
    return boxes[-1] if boxes else None


def box_fully_in_view(app: App) -> bool:
    box = approval_box(app)
    if box is None:
        return False
    viewport = app.window.transcript.viewport().rect()
    return viewport.contains(box.geometry())


def shot(app: App, name: str) -> None:
    if SHOTS:
        app.window.grab().save(str(Path(SHOTS) / name))


def test_every_session_opens_at_its_end(aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 3000)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            app.window.select_session(LONG)
            await until(lambda: app.controller.current == LONG and model.at_end
                        and not model.fetching and model.rowCount() > 0, what="opened")
            await app.idle()
            assert model.base > 2000  # its last page only, not the 3,000 events
            await until(lambda: in_view(app, model.rowCount() - 1), what="the last row shown")
            assert view.following
            bar = view.verticalScrollBar()
            await until(lambda: bar.value() == bar.maximum(), what="at the bottom")

    aloop(scenario())


def test_the_pending_approval_is_in_view_on_first_start_and_after_a_tool_prompt(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            app.window.resize(900, 600)
            waiting = app.sid("Clean up the build folder")
            # first start: the latest session (the one that waits) opens by itself
            await until(lambda: app.controller.current == waiting, what="opened at start")
            await until(lambda: box_fully_in_view(app), what="the approval box in view")
            shot(app, "approval-in-view.png")
            # answer it, then ask for another tool call in a session that scrolls
            box = approval_box(app)
            assert box is not None
            box.findChild(QWidget, "approveButton").click()
            await until(lambda: approval_box(app) is None, what="the approval answered")
            await app.idle()
            for n in range(3):
                await app.client.prompt_and_wait(waiting, f"another question {n}")
            app.window.composer.set_text('/tool read_file {"path": "README.md"}')
            app.window.transcript.scrollToTop()  # reading elsewhere; sending brings it down
            app.window.composer.submit()
            await until(lambda: box_fully_in_view(app), what="the new approval box in view")
            shot(app, "approval-after-tool-prompt.png")

    aloop(scenario())


def test_new_output_follows_a_reader_at_the_bottom_and_not_one_who_scrolled_up(
        aloop: Any, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline_module, "SLOW_DELAY", 0.01)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            sid = app.sid("Plan the 2.5 release")
            await app.open(sid)
            model, view = app.controller.transcript, app.window.transcript
            bar = view.verticalScrollBar()
            await until(lambda: bar.maximum() > 0, what="a transcript taller than its view")
            await until(lambda: bar.value() == bar.maximum(), what="opened at the bottom")
            await app.client.prompt_and_wait(sid, "/slow the reader stays at the bottom")
            await until(lambda: any("stays at the bottom" in e.text for e in app.entries
                                    if e.kind == "assistant"), what="the reply")
            await until(lambda: in_view(app, model.rowCount() - 1), what="the reply in view")
            assert not view.new_pill.isVisible()

            bar.setValue(0)  # the person scrolls up to read
            assert not view.following
            await app.client.prompt_and_wait(sid, "an answer arrives below")
            await until(lambda: any("arrives below" in e.text for e in app.entries),
                        what="the new turn")
            await app.idle()
            for _ in range(5):
                await asyncio.sleep(0.02)
            assert bar.value() == 0  # not yanked down
            assert view.new_pill.isVisible()
            assert view.new_pill.accessibleName()
            shot(app, "new-messages-pill.png")
            qtbot.mouseClick(view.new_pill, Qt.MouseButton.LeftButton)
            await until(lambda: bar.value() == bar.maximum(), what="down at the end")
            await until(lambda: in_view(app, model.rowCount() - 1), what="the last row")
            assert not view.new_pill.isVisible()

    aloop(scenario())


def test_ctrl_end_reaches_the_real_end_of_a_session_opened_at_an_event(
        aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 4000)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            app.window.select_session(LONG, at_seq=1000)
            await until(lambda: model.rowCount() > 0 and not model.fetching, what="the page")
            await app.idle()
            current = view.currentIndex().row()
            assert current >= 0
            entry = model.entry(current)
            assert entry is not None
            assert entry.seq >= 1000
            assert model.base < 1000 < model.loaded_seq < 2000
            assert not model.at_end
            await until(lambda: in_view(app, current), what="the event in view")
            view.setFocus()
            qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
            total = (app.controller.tree.summary(LONG) or {})["events"]
            await until(lambda: model.at_end and not model.fetching
                        and model.loaded_seq == total, what="the session's end loaded")
            await app.idle()
            assert model.base > total - 1000  # opened at the end, the pages between not read
            await until(lambda: in_view(app, model.rowCount() - 1), what="the last row")

    aloop(scenario())
