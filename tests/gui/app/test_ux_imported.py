"""Found walking through a store of imported Claude Code, Codex and pi sessions (the UX third
pass): a reasoning or a long tool output opened by keyboard, a failed imported tool call read
as an error, an imported fork named by the message it continues after, a subagent link in a
narrow card, and the command that resumes a session in Claude Code. Real window and store."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pi_fixtures as pf
import pytest
from gui_harness import open_app, qt_events, until
from imported_scene import (
    AGENT,
    CWD,
    SID,
    THOUGHT,
    claude_session,
    imported,
    rewound_branch,
)
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from forkwise.core.formats.claude.layout import munge_cwd
from forkwise.gui.features.agents.continue_in import ContinueDialog, continue_in
from forkwise.gui.transcript.fork_header import ForkHeader
from forkwise.gui.transcript.subagent_link import SubagentLink
from forkwise.gui.transcript.transcript_html import RESULT_LINES, entry_html

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")


def test_enter_and_space_show_a_reasoning_and_a_long_tool_output(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await imported(app, claude_session(tmp_path / "claude"))
            await app.open(rewound_branch(app))
            view = app.window.transcript
            (thought,) = app.rows("reasoning", "subagent should search")
            (tests,) = [i for i in app.rows("tool") if app.entries[i].data.get("name") == "Bash"]
            assert len(str(app.entries[tests].data["result"]).splitlines()) > RESULT_LINES
            view.setFocus()
            palette = view.palette()
            for row, hidden in ((thought, THOUGHT), (tests, "tests/test_039.py")):
                entry = app.entries[row]
                view.setCurrentIndex(app.controller.transcript.index(row))
                assert not entry.expanded
                assert hidden not in entry_html(entry, palette)
                QTest.keyClick(view, Qt.Key.Key_Return)
                assert entry.expanded, entry.kind  # what a click shows
                assert hidden in entry_html(entry, palette)
                QTest.keyClick(view, Qt.Key.Key_Space)
                assert not entry.expanded, entry.kind
            # Enter on the Task call still opens its subagent (its link), not a fold
            (task,) = [i for i in app.rows("tool") if app.entries[i].data.get("name") == "Task"]
            view.setCurrentIndex(app.controller.transcript.index(task))
            await until(lambda: isinstance(view.indexWidget(view.currentIndex()), SubagentLink),
                        what="the subagent link")
            QTest.keyClick(view, Qt.Key.Key_Return)
            await until(lambda: (app.controller.current or "").endswith(AGENT), what="subagent")

    aloop(scenario())


def test_a_failed_imported_tool_call_reads_as_an_error(aloop: Any, tmp_path: Path) -> None:
    folder = tmp_path / "pi" / "--home-ada-project--"
    pf.settled(pf.coding_session().write(folder))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await imported(app, tmp_path / "pi")
            (sid,) = [s for s in app.controller.tree.session_ids() if s.startswith("pi-")]
            await app.open(sid)
            calls = {str(app.entries[i].data["args"].get("path")): app.entries[i]
                     for i in app.rows("tool") if app.entries[i].data.get("name") == "read"}
            failed, read = calls["MISSING.md"], calls["README.md"]  # pi: isError on the first
            assert failed.data.get("is_error") is True
            assert read.data.get("is_error") is False
            palette = app.window.transcript.palette()
            # the one failed mark of core.reading's cards, on the failed call only
            assert '<b>failed</b>' in entry_html(failed, palette)
            assert ">error<" in entry_html(failed, palette)  # its output is its error
            assert '<b>failed</b>' not in entry_html(read, palette)
            assert ">error<" not in entry_html(read, palette)

    aloop(scenario())


def test_an_imported_fork_names_the_message_it_continues_after(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await imported(app, claude_session(tmp_path / "claude"))
            branch = rewound_branch(app)
            await app.open(branch)
            app.window.transcript.scrollToTop()
            header = await until(app.window.transcript.fork_header, what="fork record")
            text = header.link.text()
            # a rewind has no anchor message: it said "at event 7", then "at “…” (event 7)"
            assert "after the answer “Let me look at the CI logs.”" in text, text
            assert "event" not in text
            assert "CI hang hunt" in text  # the source, as a link
            assert "Let me look at the CI logs." in header.link.accessibleName()
            SHOTS and app.window.grab().save(str(Path(SHOTS) / "imported-fork-header.png"))
            assert isinstance(header, ForkHeader)

    aloop(scenario())


def test_a_subagent_link_in_a_narrow_card_is_elided_and_whole_again_with_room(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await imported(app, claude_session(tmp_path / "claude"))
            await app.open(rewound_branch(app))
            w = app.window
            w.resize(800, 600)
            await app.idle()
            qt_events()
            (task,) = [i for i in app.rows("tool") if app.entries[i].data.get("name") == "Task"]
            w.transcript.scrollTo(app.controller.transcript.index(task))
            link = await until(lambda: w.transcript.indexWidget(
                app.controller.transcript.index(task)), what="the subagent link")
            assert isinstance(link, SubagentLink)
            qt_events()
            SHOTS and w.grab().save(str(Path(SHOTS) / "narrow-subagent-link.png"))
            metrics = link.fontMetrics()
            whole = link.full_text
            assert metrics.horizontalAdvance(whole) > link.width()  # the card is narrower
            # shown elided to what fits (it was cut at the card's edge, mid-letter)
            assert link.text().endswith("…"), link.text()
            assert metrics.horizontalAdvance(link.text()) <= link.width()
            assert len(link.text()) > 1
            assert whole.startswith(link.text()[:-1])
            w.resize(1280, 800)
            await app.idle()
            qt_events()
            await until(lambda: link.text() == whole, what="the whole text with room")

    aloop(scenario())


def test_continue_in_claude_code_resumes_from_the_sessions_folder(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "claude-config"  # where Claude Code would find the written session
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await imported(app, claude_session(tmp_path / "claude"))
            await app.open(f"claude-{SID}")
            continue_in(app.window, "claude")
            dialog = await until(lambda: next(
                (d for d in QApplication.topLevelWidgets()
                 if isinstance(d, ContinueDialog) and d.isVisible()), None), what="dialog")
            field = dialog.findChild(QLineEdit, "resumeCommand")
            command = field.text()
            # Claude Code finds a session only from its folder ("No conversation found"
            # from anywhere else): the command goes there first
            assert command.startswith(f"cd {shlex.quote(CWD)} && claude --resume "), command
            # and is read whole, its `cd` included (the field showed "d '/home/ada/…")
            await until(field.isVisible, what="shown")
            assert field.fontMetrics().horizontalAdvance(command) < field.width() - 8
            assert field.cursorPosition() == 0
            assert dialog.frameGeometry().width() <= dialog.screen().availableGeometry().width()
            new_id = command.split()[-1]
            (written,) = config.rglob(f"{new_id}.jsonl")
            assert written.parent.name == munge_cwd(CWD)  # the folder `cd` goes to
            assert shlex.split(command)[:2] == ["cd", CWD]
            dialog.close()

    aloop(scenario())


def test_after_a_turn_failed_for_want_of_a_provider_the_model_switch_offers_to_ask_again(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QToolButton

    from forkwise.core.runtime.settings import CONFIG_ENV

    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "config"))  # none: the built-in model
    question = "and what about the timeout?"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            await imported(app, claude_session(tmp_path / "claude"))
            main = f"claude-{SID}"
            await app.open(main)
            w.composer.edit.setPlainText(question)
            w.composer.send_button.click()
            await until(lambda: app.entries[-1].kind == "turn"
                        and app.entries[-1].text == "failed", what="the turn fails")
            assert "provider" in str(app.entries[-1].data.get("error"))
            before = set(c.tree.session_ids())
            w.action_use_model.trigger()  # what the failed turn's hint points to
            banner = w.findChild(QWidget, "banner")
            button = banner.findChild(QToolButton, "bannerAction")
            await until(lambda: button.isVisible() and button.text() == "Retry",
                        what="the offer to ask again")
            assert question in banner.label.text()
            button.click()
            # a branch before the failed turn asks the question again, with the new model
            child = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None),
                                what="the branch")
            await until(lambda: c.current == child, what="the branch opened")
            await until(lambda: any(e.kind == "assistant" and question in e.text
                                    for e in app.entries), what="the answer")
            assert (c.tree.summary(main) or {}).get("model") == "forkwise-offline"

    aloop(scenario())


def test_a_fork_of_a_fork_shows_its_sibling_arrows_on_its_own_fork_record_only(
        aloop: Any, tmp_path: Path) -> None:
    """A fork of a fork holds the fork record its source copied (pi's /tree branch of a
    branch, the demo's 'Two weeks, skipping the RC'); the arrows between the child's
    siblings and the stepping landed on that copied record, the ancestors' fork point."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            two = app.sid("Two weeks, skipping the RC")
            summary = c.tree.summary(two) or {}
            parent = summary["parentSession"]
            sibling = await app.client.fork(parent, at_seq=summary["seedLength"])
            c.tree.upsert(sibling)
            await app.idle()
            await app.open(two)
            w.transcript.scrollToTop()
            await app.idle()
            qt_events()
            forks = app.rows("fork")
            assert len(forks) == 2  # the copied record (from Plan) and its own
            view = w.transcript
            copied, own = (view.indexWidget(c.transcript.index(r)) for r in forks)
            assert isinstance(copied, ForkHeader)
            assert isinstance(own, ForkHeader)
            assert copied.source != parent
            assert own.source == parent
            assert view.fork_header() is own
            await until(lambda: own.where.isVisibleTo(own), what="the arrows on its record")
            assert own.where.text() in ("1/2", "2/2")
            assert not copied.where.isVisibleTo(copied)  # none on the ancestors' record
            assert not copied.next.isVisibleTo(copied)
            # stepping back from the sibling lands at the child's own fork record (with its
            # turns below it, it can be at the top), not at the copied one
            step = -1 if own.where.text() == "2/2" else +1
            w.resize(1280, 380)  # a short window: the record can scroll to the top
            await app.open(sibling["id"])
            w.features["branches"].step_sibling(-step)
            await until(lambda: c.current == two, what="stepped back")
            await until(lambda: c.transcript.at_end and not c.transcript.fetching,
                        what="its rows")
            await app.idle()
            (_copied_row, own_row) = app.rows("fork")
            def top_row() -> int:
                return view.indexAt(QPoint(view.viewport().width() // 2, 12)).row()

            await until(lambda: top_row() == own_row, what="its own fork record at the top")

    aloop(scenario())
