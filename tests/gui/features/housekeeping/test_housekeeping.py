"""Session housekeeping in the app: Delete with Undo in the banner, Duplicate, Approve and
Deny from the keyboard; every control added here has an accessible name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QListView, QWidget

pytestmark = pytest.mark.gui


def test_delete_then_undo_from_the_banner(aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            sid = app.sid("Quick question about tabs vs spaces")
            await app.open(sid)
            path = app.store_dir / "sessions" / f"{sid}.jsonl"
            before = path.read_bytes()
            w.tree.setFocus()
            qtbot.keyClick(w.tree, Qt.Key.Key_Delete)
            await until(lambda: sid not in c.tree.session_ids(), what="gone from the tree")
            await app.idle()
            assert not path.exists()
            assert c.current != sid
            banner = w.banner
            assert banner.isVisible()
            assert "moved to the trash" in banner.label.text()
            assert banner.action_button.isVisible()
            assert banner.action_button.text() == "Undo"
            assert banner.action_button.accessibleName().startswith("Undo")
            qtbot.mouseClick(banner.action_button, Qt.MouseButton.LeftButton)
            await until(lambda: sid in c.tree.session_ids() and c.current == sid,
                        what="back and opened")
            await app.idle()
            assert path.read_bytes() == before
            assert w.selected_session() == sid

    aloop(scenario())


def test_duplicate_copies_the_whole_session(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            sid = app.sid("Plan the 2.5 release")
            await app.open(sid)
            before = set(c.tree.session_ids())
            w.action_duplicate.trigger()
            child = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None),
                                what="the copy")
            await until(lambda: c.current == child, what="the copy opened")
            source, copy = app.log(sid), app.log(child)
            n = len(source) - 1
            assert copy[0]["parentSession"] == sid
            assert copy[0]["seedLength"] == n  # every event, to the end
            assert [e["type"] for e in copy[1:n + 1]] == [e["type"] for e in source[1:]]

    aloop(scenario())


def test_approve_and_deny_from_the_keyboard(aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            waiting = app.sid("Clean up the build folder")
            await app.open(waiting)
            await until(w.action_approve.isEnabled, what="approve enabled")
            assert w.action_approve.shortcut().toString()
            assert w.action_deny.shortcut().toString()
            w.transcript.setFocus()
            qtbot.keyClick(w, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier
                           | Qt.KeyboardModifier.ShiftModifier)
            await until(lambda: not w.action_approve.isEnabled(), what="answered")
            await until(lambda: not c.transcript.running, what="the turn ended")
            resolved = [e for e in app.log(waiting) if e.get("type") == "approval/resolve"]
            assert resolved[-1]["decision"] == "approved"

            outcome = await app.client.prompt_and_wait(waiting, '/tool list_dir {"path": "."}')
            assert outcome["status"] == "waiting"
            await until(w.action_deny.isEnabled, what="a new approval")
            qtbot.keyClick(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier
                           | Qt.KeyboardModifier.ShiftModifier)
            await until(lambda: not w.action_deny.isEnabled(), what="denied")
            await until(lambda: [e for e in app.log(waiting)
                                 if e.get("type") == "approval/resolve"][-1]["decision"]
                        == "denied", what="the denial in the log")

    aloop(scenario())


def test_every_control_added_has_an_accessible_name(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.show_search()
            w.controller.notifier.info("x", action_label="Undo", action=lambda: None)
            names = ("searchPanel", "searchBox", "searchResults", "searchStatus",
                     "searchClose", "bannerAction", "newMessagesPill")
            for name in names:
                widget = w.findChild(QWidget, name)
                assert widget is not None, name
                assert widget.accessibleName(), name
            for action in (w.action_search, w.action_delete, w.action_duplicate,
                           w.action_approve, w.action_deny):
                assert action.text()
                assert action.toolTip()
            assert isinstance(w.findChild(QLineEdit, "searchBox"), QLineEdit)
            assert isinstance(w.findChild(QListView, "searchResults"), QListView)
            assert isinstance(w.findChild(QAbstractButton, "bannerAction"), QAbstractButton)

    aloop(scenario())
