"""Branches as a first-class view, driven like a person would, over the real
in-process host and a JSONL store: editing branches (the source stays byte-identical),
retry, rename, titles of forks, siblings, compare and a source that changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from demo_steps import PLAN, action, new_child, settled
from gui_harness import App, open_app, until
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QToolButton

from forkwise.gui.transcript.fork_header import ForkHeader

pytestmark = pytest.mark.gui

QUICK = "Quick question about tabs vs spaces"


async def fork_current(app: App) -> str:
    before = set(app.controller.tree.session_ids())
    app.window.action_fork.trigger()
    return await new_child(app, before)


def header(app: App) -> ForkHeader:
    found = app.window.transcript.fork_header()
    assert found is not None
    return found


def test_edit_and_resend_branches_and_keeps_the_source(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            quick = app.sid(QUICK)
            await app.open(quick)
            source_file = app.store_dir / "sessions" / f"{quick}.jsonl"
            source_bytes = source_file.read_bytes()
            row = app.rows("user")[0]
            entry = app.entries[row]
            menu = app.message_menu(row)
            edit = action(menu, "actionEditResend")
            assert edit.isEnabled()
            before = set(c.tree.session_ids())
            edit.trigger()
            menu.close()
            assert w.composer.editing_message == entry.message_id
            assert not w.composer.replacing
            assert "new branch" in w.composer.mode_label.text()
            w.composer.set_text("Tabs or spaces for a Go project?")
            QTest.keyClick(w.composer.edit, Qt.Key.Key_Return)
            child = await new_child(app, before)
            await until(lambda: any(e.kind == "assistant" and "Go project" in e.text
                                    for e in app.entries), what="the reply in the child")
            await settled(app)
            assert c.tree.parent_of(child) == quick
            assert w.selected_session() == child
            assert source_file.read_bytes() == source_bytes  # byte-identical
            log = app.log(child)
            start = max(e["seq"] for e in app.log(quick)[1:]
                        if e["type"] == "turn/start" and e["seq"] < entry.seq)
            assert log[0]["seedLength"] == start - 1
            users = [e.text for e in app.entries if e.kind == "user"]
            assert users == ["Tabs or spaces for a Go project?"]
            assert w.composer.text() == ""
            assert w.composer.editing_message is None
            # it asked its own question first: its title says so
            assert c.tree.title_of(child) == "Tabs or spaces for a Go project?"
            assert app.notifier.errors() == []

    aloop(scenario())


def test_retry_asks_the_same_question_in_a_branch(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            plan = app.sid(PLAN)
            await app.open(plan)
            source_bytes = (app.store_dir / "sessions" / f"{plan}.jsonl").read_bytes()
            answer = app.rows("assistant")[-1]
            entry = app.entries[answer]
            question = next(e for e in app.entries
                            if e.turn == entry.turn and e.kind == "user")
            menu = app.message_menu(answer)
            retry = action(menu, "actionRetry")
            assert retry.isEnabled()
            assert retry.text() == "&Retry"
            assert not action(menu, "actionEditResend").isEnabled()  # not a question
            before = set(c.tree.session_ids())
            retry.trigger()
            menu.close()
            child = await new_child(app, before)
            await until(lambda: any(e.kind == "user" and e.seq > app.log(child)[0]["seedLength"]
                                    for e in app.entries), what="the question again")
            await settled(app)
            asked = [e.text for e in app.entries
                     if e.kind == "user" and e.seq > app.log(child)[0]["seedLength"]]
            assert asked == [question.text]
            assert question.message_id not in {e.message_id for e in app.entries}
            assert (app.store_dir / "sessions" / f"{plan}.jsonl").read_bytes() == source_bytes
            assert app.notifier.errors() == []

    aloop(scenario())


def test_forks_are_told_apart_and_rename_survives_a_restart(aloop: Any, tmp_path: Path) -> None:
    async def first() -> str:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            plan = app.sid(PLAN)
            await app.open(plan)
            one = await fork_current(app)
            await app.open(plan)
            two = await fork_current(app)
            assert c.tree.title_of(one) == f"{PLAN} — fork 2"  # the demo has a fork already
            assert c.tree.title_of(two) == f"{PLAN} — fork 3"
            index = c.proxy.mapFromSource(c.tree.index_for(two))
            assert index.data() == f"{PLAN} — fork 3"  # what the row shows
            assert w.header_label.text().startswith(f"{PLAN} — fork 3")
            # F2 renames the selected session
            assert w.features["branches"].rename.shortcut().toString() == "F2"
            assert w.features["branches"].rename.isEnabled()
            w.activateWindow()
            await until(lambda: QApplication.activeWindow() is w, what="window active")
            w.tree.setFocus()
            QTest.keyClick(w.tree, Qt.Key.Key_F2)  # the key, with the tree focused
            await until(lambda: w.features["branches"].rename_dialog is not None, what="rename dialog")
            dialog = w.features["branches"].rename_dialog
            assert dialog is not None
            assert dialog.isVisible()
            assert dialog.textValue() == f"{PLAN} — fork 3"
            dialog.setTextValue("Plan B: ship in May")
            dialog.accept()
            await until(lambda: c.tree.title_of(two) == "Plan B: ship in May", what="renamed")
            assert app.log(two)[-1] == {**app.log(two)[-1], "type": "session/title",
                                        "title": "Plan B: ship in May"}
            assert c.tree.title_of(one) == f"{PLAN} — fork 2"
            # the source renamed: its forks not renamed yet follow it, row by row
            changed: list[str] = []
            c.tree.dataChanged.connect(lambda a, _b, _r=(): changed.append(a.data()))
            await app.client.rename_session(plan, "Release 2.5")
            await until(lambda: c.tree.title_of(one) == "Release 2.5 — fork 2", what="follows")
            assert "Release 2.5 — fork 2" in changed
            return two

    two = aloop(first())

    async def again() -> None:
        async with open_app(tmp_path, demo=False) as app:
            assert app.controller.tree.title_of(two) == "Plan B: ship in May"

    aloop(again())


def test_siblings_step_at_the_fork_point(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            quick = app.sid(QUICK)
            await app.open(quick)
            assert not w.features["branches"].previous.isEnabled()  # not a fork: no siblings
            assert w.features["branches"].previous.text() == "&Previous fork"  # short text
            assert "no other fork" in w.features["branches"].previous.toolTip()
            kids = []
            for _ in range(3):
                await app.open(quick)
                kids.append(await fork_current(app))
            await app.open(kids[1])
            await until(lambda: w.transcript.fork_header() is not None, what="fork record")
            place = header(app).findChild(QLabel, "siblingPosition")
            assert place.isVisibleTo(w)
            assert place.text() == "2/3"
            assert w.features["branches"].previous.isEnabled()
            assert w.features["branches"].next.isEnabled()
            w.features["branches"].next.trigger()
            await until(lambda: c.current == kids[2], what="next sibling")
            assert w.selected_session() == kids[2]
            await until(lambda: w.transcript.fork_header() is not None, what="its fork record")
            assert header(app).findChild(QLabel, "siblingPosition").text() == "3/3"
            assert not w.features["branches"].next.isEnabled()
            assert "last fork" in w.features["branches"].next.statusTip()
            # the arrows in the fork record do the same
            header(app).findChild(QToolButton, "siblingPrevious").click()
            await until(lambda: c.current == kids[1], what="previous sibling")
            # and the shortcut
            assert w.features["branches"].previous.shortcut().toString() == "Alt+Left"
            w.activateWindow()
            await until(lambda: QApplication.activeWindow() is w, what="window active")
            QTest.keyClick(w.tree, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
            await until(lambda: c.current == kids[0], what="first sibling")
            assert not w.features["branches"].previous.isEnabled()
            # the source is not a sibling; a fork at another point has none
            assert quick not in {kids[0], kids[1], kids[2]}
            plan = app.sid(PLAN)
            await app.open(plan)
            other = await fork_current(app)
            await until(lambda: w.transcript.fork_header() is not None)
            assert not header(app).findChild(QLabel, "siblingPosition").isVisibleTo(w)
            assert not w.features["branches"].next.isEnabled()
            assert c.tree.parent_of(other) == plan

    aloop(scenario())


def test_compare_two_sessions_of_a_lineage(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            quick = app.sid(QUICK)
            await app.open(quick)
            child = await fork_current(app)
            w.composer.set_text("/tool read_file {\"path\": \"README.md\"}")
            w.composer.submit()
            await until(lambda: any(e.kind == "approval" for e in app.entries),
                        what="approval asked")
            approval = next(e for e in app.entries if e.kind == "approval")
            c.approve(str(approval.data["approval"]), True)
            await settled(app)
            # extended selection: the source and the child
            w.features["branches"].select_pair(quick, child)
            assert len(w.tree.selectionModel().selectedRows(0)) == 2
            assert w.features["branches"].compare.isEnabled()
            w.features["branches"].compare.trigger()
            await until(lambda: w.features["branches"].compare_view is not None
                        and w.features["branches"].compare_view.isVisible(), what="compare view")
            await app.idle()
            view = w.features["branches"].compare_view
            assert view.objectName() == "compareView"
            shared = app.log(child)[0]["seedLength"]
            assert f"events 1 to {shared}" in view.shared.text()
            right = "\n".join(view.column_text(1))
            left = "\n".join(view.column_text(0))
            assert "⚙ read_file" in right  # the child's tool call, shown
            assert "result" in right
            assert "Forked from" in right
            assert "read_file" not in left  # the source did not diverge after the fork
            # one row selected: the opened fork and its source
            w.tree.selectionModel().setCurrentIndex(
                c.proxy.mapFromSource(c.tree.index_for(child)),
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
            assert w.features["branches"].pair() == (quick, child)
            # two sessions of different lineages cannot be compared
            w.features["branches"].select_pair(quick, app.sid(PLAN))
            assert not w.features["branches"].compare.isEnabled()

    aloop(scenario())


def test_a_child_says_its_source_changed(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            plan = app.sid(PLAN)
            await app.open(plan)
            child = await fork_current(app)
            await until(lambda: w.transcript.fork_header() is not None)
            await app.idle()
            assert not header(app).findChild(QLabel, "sourceChanged").isVisibleTo(w)
            assert "changed" not in w.header_label.text()
            # the source is rewritten in place below the fork point
            await app.open(plan)
            first = app.entries[app.rows("user")[0]]
            await app.client.truncate(plan, str(first.message_id), include_message=True)
            await app.idle()
            await app.open(child)
            await until(lambda: w.transcript.fork_header() is not None
                        and header(app).findChild(QLabel, "sourceChanged").isVisibleTo(w),
                        what="the source-changed line")
            line = header(app).findChild(QLabel, "sourceChanged")
            assert "source changed since this fork" in line.text()
            assert "source changed since this fork" in w.header_label.text()
            line.linkActivated.emit("compare:")
            await until(lambda: w.features["branches"].compare_view is not None
                        and w.features["branches"].compare_view.isVisible(), what="compare view")
            assert w.features["branches"].compare_view.sessions == (plan, child)

    aloop(scenario())
