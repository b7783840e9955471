"""The assembled app over the real in-process host, a JSONL store in tmp_path and the
offline provider: the fork flows a person uses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from gui_harness import App, expected_tree, model_tree, open_app, until
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QAction, QContextMenuEvent
from PySide6.QtWidgets import QApplication

from forkwise.core.errors import WorkspaceAttachFailed
from forkwise.core.runtime.workspaces import MemoryWorkspaces
from forkwise.gui.domain.message_actions import MID_TURN, NOT_YOURS, RUNNING, WAITING
from forkwise.gui.models.session_rows import ID_ROLE

pytestmark = pytest.mark.gui

PLAN = "Plan the 2.5 release"
WAITING_TITLE = "Clean up the build folder"
QUICK = "Quick question about tabs vs spaces"


def action(menu: Any, name: str) -> QAction:
    found = [a for a in menu.actions() if a.objectName() == name]
    assert found, name
    return found[0]


def check_tree(app: App) -> None:
    """The tree model matches the client's catalogue (the data it is built from)."""
    assert model_tree(app.controller.tree) == expected_tree(app.client.catalogue)


async def queued_behind(app: App, rounds: int = 3) -> None:
    """Until a marker queued now (behind whatever Qt and asyncio hold already) has run,
    `rounds` times: what was queued for the tree has landed, with no fixed sleep."""
    from PySide6.QtCore import QTimer

    for _ in range(rounds):
        passed = asyncio.Event()
        QTimer.singleShot(0, passed.set)
        await passed.wait()
        await app.idle()


async def wait_child(app: App, source: str, before: set[str]) -> str:
    def child() -> str | None:
        new = set(app.controller.tree.session_ids()) - before
        return next(iter(new), None) if new else None

    sid = await until(child, what="a new child in the tree")
    await until(lambda: app.controller.current == sid and app.controller.transcript.at_end,
                what="child opened")
    await app.idle()
    return str(sid)


def assert_shown_beneath(app: App, child: str, source: str) -> None:
    c, w = app.controller, app.window
    assert c.tree.parent_of(child) == source
    assert w.selected_session() == child
    assert c.current == child
    proxy_source = c.proxy.mapFromSource(c.tree.index_for(source))
    assert w.tree.isExpanded(proxy_source)
    forks = [e for e in app.entries if e.kind == "fork"]
    assert forks
    assert forks[-1].data["source"] == source
    check_tree(app)


def test_row_fork_toolbar_child_beneath_source_selected_and_open(aloop: Any, tmp_path: Path, qtmodeltester: Any) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            qtmodeltester.check(app.controller.tree)
            check_tree(app)
            plan = app.sid(PLAN)
            await app.open(plan)
            before = set(app.controller.tree.session_ids())
            resets: list[int] = []
            app.controller.tree.modelReset.connect(lambda: resets.append(1))
            app.window.action_fork.trigger()
            child = await wait_child(app, plan, before)
            assert_shown_beneath(app, child, plan)
            assert resets == []
            log = app.log(child)
            source_log = app.log(plan)
            last_end = max(e["seq"] for e in source_log[1:] if e["type"] == "turn/end")
            assert log[0]["parentSession"] == plan
            assert log[0]["seedLength"] == last_end
            assert app.notifier.errors() == []
            qtmodeltester.check(app.controller.tree)
            qtmodeltester.check(app.controller.proxy)

    aloop(scenario())


def test_row_fork_from_context_menu_and_shortcut(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            quick = app.sid(QUICK)
            index = c.proxy.mapFromSource(c.tree.index_for(quick))
            pos = w.tree.visualRect(index).center()
            QApplication.sendEvent(w.tree.viewport(), QContextMenuEvent(
                QContextMenuEvent.Reason.Mouse, pos, w.tree.viewport().mapToGlobal(pos)))
            menu = w.tree.last_menu
            assert menu is not None
            fork = action(menu, "actionForkSession")
            assert fork.isEnabled()
            assert w.selected_session() == quick  # the row asked about is the one forked
            before = set(c.tree.session_ids())
            fork.trigger()
            menu.close()
            child = await wait_child(app, quick, before)
            assert_shown_beneath(app, child, quick)

            # the shortcut: the same action, reachable from the keyboard
            assert w.action_fork.shortcut().toString() == "Ctrl+Shift+K"
            w.tree.selectionModel().setCurrentIndex(
                c.proxy.mapFromSource(c.tree.index_for(quick)),
                QItemSelectionModel.SelectionFlag.ClearAndSelect)
            before = set(c.tree.session_ids())
            w.activateWindow()
            await until(lambda: QApplication.activeWindow() is w, what="window active")
            from PySide6.QtCore import Qt
            from PySide6.QtTest import QTest
            QTest.keyClick(w.tree, Qt.Key.Key_K,
                           Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
            second = await wait_child(app, quick, before)
            assert c.tree.parent_of(second) == quick

    aloop(scenario())


def test_message_fork_on_completed_turn(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            plan = app.sid(PLAN)
            await app.open(plan)
            row = app.rows("user", "changelog")[0]
            entry = app.entries[row]
            menu = app.message_menu(row)
            fork_from = action(menu, "actionForkFromMessage")
            assert fork_from.isEnabled()
            assert action(menu, "actionForkBeforeMessage").isEnabled()
            assert action(menu, "actionEditResend").isEnabled()
            assert action(menu, "actionCopyMessage").text() == "&Copy"
            before = set(app.controller.tree.session_ids())
            fork_from.trigger()
            menu.close()
            child = await wait_child(app, plan, before)
            assert_shown_beneath(app, child, plan)
            events = app.log(plan)[1:]
            end = next(e["seq"] for e in events if e["seq"] > entry.seq and e["type"] == "turn/end")
            header = app.log(child)[0]
            assert header["seedLength"] == end
            fork_event = app.log(child)[end + 1]
            assert fork_event["type"] == "history/fork"
            assert fork_event["boundary"] == end
            assert fork_event["anchorTurn"] == entry.turn

    aloop(scenario())


def test_fork_before_message_and_its_reasons(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            plan = app.sid(PLAN)
            await app.open(plan)
            assistant = app.rows("assistant", "calling read_file")[0]
            menu = app.message_menu(assistant)
            before_action = action(menu, "actionForkBeforeMessage")
            assert not before_action.isEnabled()
            assert before_action.toolTip() == MID_TURN
            assert before_action.statusTip() == MID_TURN
            edit = action(menu, "actionEditResend")
            assert not edit.isEnabled()
            assert edit.toolTip() == NOT_YOURS
            menu.close()
            row = app.rows("user", "changelog")[0]
            entry = app.entries[row]
            menu = app.message_menu(row)
            before = set(app.controller.tree.session_ids())
            action(menu, "actionForkBeforeMessage").trigger()
            menu.close()
            child = await wait_child(app, plan, before)
            assert_shown_beneath(app, child, plan)
            events = app.log(plan)[1:]
            start = max(e["seq"] for e in events if e["type"] == "turn/start" and e["seq"] < entry.seq)
            assert app.log(child)[0]["seedLength"] == start - 1
            assert entry.message_id not in {e.message_id for e in app.entries}

    aloop(scenario())


def test_message_fork_on_running_turn_is_disabled_and_the_host_refuses(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            waiting = app.sid(WAITING_TITLE)
            await app.open(waiting)
            row = app.rows("user", "README")[0]
            menu = app.message_menu(row)
            fork_from = action(menu, "actionForkFromMessage")
            assert not fork_from.isEnabled()
            assert fork_from.toolTip() == WAITING
            assert action(menu, "actionForkBeforeMessage").isEnabled()
            # editing branches, so it works while a turn waits; editing in place does not
            assert action(menu, "actionEditResend").isEnabled()
            replace = action(menu, "actionEditReplace")
            assert not replace.isEnabled()
            assert replace.text() == "Edit and re&place…"  # short: the reason is the tip
            assert replace.toolTip() == WAITING
            menu.close()
            # the host is the judge: asking anyway shows fork-unavailable, in words
            before = set(app.controller.tree.session_ids())
            app.controller.fork_from_message(row)
            await app.idle()
            errors = app.notifier.errors()
            assert [e.code for e in errors] == ["fork-unavailable"]
            assert app.window.banner.isVisible()
            assert "has not finished yet" in app.window.banner.label.text()
            assert set(app.controller.tree.session_ids()) == before

            # a turn that is really running (streaming) says so
            quick = app.sid(QUICK)
            await app.open(quick)
            app.window.composer.set_text("/slow tell me a long story about forks")
            app.window.composer.submit()
            await until(lambda: app.controller.transcript.running, what="turn running")
            await until(app.window.composer.stop_button.isEnabled, what="Stop enabled")
            row = app.rows("user", "/slow")[0]
            menu = app.message_menu(row)
            fork_from = action(menu, "actionForkFromMessage")
            assert not fork_from.isEnabled()
            assert fork_from.toolTip() == RUNNING
            menu.close()
            await until(lambda: app.controller.transcript.stream is not None, what="streaming")
            app.window.composer.stop_button.click()
            await until(lambda: not app.controller.transcript.running, what="turn cancelled")
            assert app.entries[-1].kind == "turn", [(e.kind, e.text[:30]) for e in app.entries]
            assert app.entries[-1].text == "cancelled", [(e.kind, e.text[:30]) for e in app.entries]
            assert app.entries[-1].text == "cancelled"

    aloop(scenario())


class RefusingWorkspaces(MemoryWorkspaces):
    def attach(self, workspace: str, session_id: str) -> None:
        raise WorkspaceAttachFailed(f"workspace {workspace!r} is read-only")


def test_attach_failure_child_in_tree_then_error(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, workspaces=RefusingWorkspaces()) as app:
            order: list[str] = []
            app.controller.tree.rowsInserted.connect(lambda *_a: order.append("row"))
            app.notifier.posted.connect(lambda n: order.append(f"notice:{n.code}"))
            plan = app.sid(PLAN)
            await app.open(plan)
            before = set(app.controller.tree.session_ids())
            app.window.action_fork.trigger()
            child = await wait_child(app, plan, before)
            await until(app.notifier.errors, what="the error")
            assert order.index("row") < order.index("notice:workspace-attach-failed")
            assert app.controller.tree.parent_of(child) == plan
            assert app.window.selected_session() == child
            assert app.window.banner.isVisible()
            assert "could not be added to its workspace" in app.window.banner.label.text()
            check_tree(app)

    aloop(scenario())


def test_edit_and_replace_confirms_then_replaces_in_place(aloop: Any, tmp_path: Path, qtmodeltester: Any) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            quick = app.sid(QUICK)
            await app.open(quick)
            qtmodeltester.check(c.transcript)
            row = app.rows("user")[0]
            old_id = app.entries[row].message_id
            rows_before = c.transcript.rowCount()
            removed: list[tuple[int, int]] = []
            c.transcript.rowsRemoved.connect(lambda _p, a, b: removed.append((a, b)))
            log_before = app.log(quick)
            # Cancel: nothing happens
            menu = app.message_menu(row)
            action(menu, "actionEditReplace").trigger()
            menu.close()
            from PySide6.QtWidgets import QMessageBox
            cancelled = app.window.features["branches"].confirm_box
            assert cancelled is not None
            cancelled.button(QMessageBox.StandardButton.Cancel).click()
            await app.idle()
            assert app.window.composer.editing_message is None
            assert app.log(quick) == log_before
            menu = app.message_menu(row)
            action(menu, "actionEditReplace").trigger()
            menu.close()
            box = app.window.features["branches"].confirm_box
            assert box is not None
            assert box.isVisible()
            turns = sum(1 for e in app.log(quick)[1:] if e["type"] == "turn/start")
            messages = sum(1 for e in app.log(quick)[1:] if e["type"] == "message")
            assert f"deletes {turns} turn" in box.text()
            assert f"({messages} message" in box.text()
            composer = app.window.composer
            assert composer.editing_message is None  # nothing happens before the answer
            next(b for b in box.buttons() if b.objectName() == "confirmReplaceButton").click()
            assert composer.replacing
            assert composer.editing_message == old_id
            assert "Tabs or spaces" in composer.text()
            composer.set_text("Tabs or spaces for a Go project?")
            from PySide6.QtCore import Qt
            from PySide6.QtTest import QTest
            QTest.keyClick(composer.edit, Qt.Key.Key_Return)
            await until(lambda: any(e.kind == "assistant" and "Go project" in e.text
                                    for e in app.entries), what="the new reply")
            await until(lambda: not c.transcript.running, what="turn ended")
            await app.idle()
            assert removed  # the truncate notification dropped rows
            assert removed[0][0] <= row
            assert c.current == quick  # the same session, no branch
            assert old_id not in {e.message_id for e in app.entries}
            assert all(e.kind != "fork" for e in app.entries)
            users = [e.text for e in app.entries if e.kind == "user"]
            assert users == ["Tabs or spaces for a Go project?"]
            assert composer.text() == ""
            assert composer.editing_message is None
            assert rows_before > 0
            # the model matches a transcript built from the log on disk
            from forkwise.core.reading.entries import build
            fresh = build(app.log(quick)[1:])
            assert [(e.kind, e.text) for e in fresh.entries] == [(e.kind, e.text) for e in app.entries]
            qtmodeltester.check(c.transcript)
            assert app.notifier.errors() == []

    aloop(scenario())


def test_streaming_reply_and_new_session(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            before = set(c.tree.session_ids())
            app.window.action_new.trigger()
            sid = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None))
            await until(lambda: c.current == sid)
            assert c.tree.parent_of(sid) is None
            seen: list[str] = []
            c.transcript.dataChanged.connect(
                lambda a, _b, _r=(): seen.append(c.transcript.entry(a.row()).text)
                if c.transcript.entry(a.row()) is not None and c.transcript.entry(a.row()).kind == "stream" else None)
            app.window.composer.set_text("/slow stream these words one at a time please")
            app.window.composer.submit()
            await until(lambda: c.transcript.stream is not None, what="streaming row")
            assert app.window.composer.stop_button.isEnabled()
            await until(lambda: not c.transcript.running and c.transcript.stream is None,
                        what="the turn ended")
            await app.idle()
            assert len(seen) >= 3  # text grew word by word
            replies = [e.text for e in app.entries if e.kind == "assistant"]
            assert replies
            assert "stream these words" in replies[-1]
            assert app.entries[-1].kind == "turn"
            assert app.entries[-1].text == "completed"
            assert app.window.composer.text() == ""
            assert not app.window.composer.stop_button.isEnabled()

    aloop(scenario())


def test_approve_button_runs_the_tool(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            waiting = app.sid(WAITING_TITLE)
            await app.open(waiting)
            from PySide6.QtWidgets import QPushButton
            row = next(i for i, e in enumerate(app.entries)
                       if e.kind == "approval" and e.data["decision"] is None)
            widget = app.window.transcript.indexWidget(app.controller.transcript.index(row))
            assert widget is not None
            approve = widget.findChild(QPushButton, "approveButton")
            assert approve.accessibleName() == "Approve read_file"
            approve.click()
            await until(lambda: app.entries[row].data["decision"] == "approved")
            await until(lambda: not app.controller.transcript.running, what="turn ended")
            tool = next(e for e in app.entries if e.kind == "tool" and e.seq < app.entries[row].seq
                        and e.data.get("call") == app.entries[row].data["call"])
            await until(lambda: tool.data.get("result") is not None)
            assert "Release tooling" in str(tool.data["result"])
            assert app.window.transcript.indexWidget(app.controller.transcript.index(row)) is None

    aloop(scenario())


def test_fork_link_selects_the_source(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            shorter = app.sid("2.5 release — two-week schedule")
            await app.open(shorter)
            row = next(i for i, e in enumerate(app.entries) if e.kind == "fork")
            from PySide6.QtWidgets import QLabel
            header = app.window.transcript.indexWidget(app.controller.transcript.index(row))
            label = header.findChild(QLabel, "forkLink")
            assert isinstance(label, QLabel)
            assert "Forked from" in label.text()
            assert PLAN in label.text()
            assert "Since 2.3.1" in label.text()  # the anchor message, in words
            label.linkActivated.emit(f"session:{app.sid(PLAN)}")
            await until(lambda: app.controller.current == app.sid(PLAN))
            assert app.window.selected_session() == app.sid(PLAN)

    aloop(scenario())


def test_filter_by_title_and_message_text(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            w.action_find.trigger()
            w.filter_box.setText("tabs vs")
            await until(lambda: c.proxy.rowCount() == 1, what="title filter")
            w.filter_box.setText("announcement e-mail")  # only in message text
            await until(lambda: c.proxy.pattern == "announcement e-mail")
            await app.idle()
            await until(lambda: model_tree(c.proxy) == {app.sid(PLAN): {}}, what="text filter")
            w.filter_box.clear()
            await until(lambda: not c.proxy.pattern)
            assert model_tree(c.proxy) == model_tree(c.tree) or c.proxy.rowCount() == c.tree.rowCount()

    aloop(scenario())


def test_remote_host_over_socket(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, carrier="unix") as app:
            check_tree(app)
            plan = app.sid(PLAN)
            await app.open(plan)
            before = set(app.controller.tree.session_ids())
            app.window.action_fork.trigger()
            child = await wait_child(app, plan, before)
            assert_shown_beneath(app, child, plan)
            # the host goes away: the error is shown and the typed text kept
            assert app.server is not None
            await app.server.close()
            await app.client.close()
            app.window.composer.set_text("are you still there?")
            app.window.composer.submit()
            await app.idle()
            assert app.notifier.errors()
            assert app.window.banner.isVisible()
            assert app.window.composer.text() == "are you still there?"

    aloop(scenario())


def test_fork_click_puts_the_child_row_in_once(aloop: Any, tmp_path: Path) -> None:
    """The child row comes twice — the fork's answer and the host's catalogue
    notification — and is put in the tree once: one row inserted, nothing changed after."""
    async def scenario() -> tuple[list[str], list[str], int]:
        async with open_app(tmp_path) as app:
            c = app.controller
            plan = app.sid(PLAN)
            await app.open(plan)
            before = set(c.tree.session_ids())
            inserted: list[str] = []
            changed: list[str] = []
            moved: list[int] = []

            def rows_inserted(parent: Any, first: int, last: int) -> None:
                inserted.extend(c.tree.index(r, 0, parent).data(ID_ROLE)
                                for r in range(first, last + 1))

            c.tree.rowsInserted.connect(rows_inserted)
            c.tree.dataChanged.connect(lambda top, _bottom: changed.append(top.data(ID_ROLE)))
            c.tree.rowsMoved.connect(lambda *_a: moved.append(1))
            app.window.action_fork.trigger()
            child = await wait_child(app, plan, before)
            await until(lambda: child in app.client.catalogue, what="the notification")
            await app.idle()
            await queued_behind(app)  # anything still queued for the tree lands
            row = {k: v for k, v in (c.tree.summary(child) or {}).items() if k != "usage"}
            assert row == app.client.catalogue[child]  # (the tree adds its cost)
            return inserted, [s for s in changed if s == child], len(moved)

    inserted, child_changed, moved = aloop(scenario())
    assert len(inserted) == 1, inserted
    assert child_changed == []
    assert moved == 0
