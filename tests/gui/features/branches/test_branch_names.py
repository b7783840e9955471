"""Branches that look alike are told apart (issue 34, item 7): a fork made by editing a
question is named after its edited question, the version counter at a fork point counts
the original (as chat apps' version arrows do), and the fork record says where it was cut
in the conversation's words, not by an event number."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from demo_steps import PLAN, action, new_child, settled
from gui_harness import App, open_app, until
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QToolButton
from rewound_scene import SID, claude_rewound_twice

from forkwise.core.client.titles import forks_of

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
MAIN = f"claude-{SID}"
SECOND = "What changed since 2.3? Check the changelog."


async def edit_and_resend(app: App, source: str, question: str, text: str) -> str:
    """Edit `question` of `source` into `text` and send it: the new branch."""
    c, w = app.controller, app.window
    await app.open(source)
    row = next(r for r in app.rows("user") if app.entries[r].text == question)
    menu = app.message_menu(row)
    before = set(c.tree.session_ids())
    action(menu, "actionEditResend").trigger()
    menu.close()
    w.composer.set_text(text)
    QTest.keyClick(w.composer.edit, Qt.Key.Key_Return)
    child = await new_child(app, before)
    await settled(app)
    return child


def test_edited_questions_name_their_branches(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            plan = app.sid(PLAN)
            one = await edit_and_resend(app, plan, SECOND, "What changed since 2.4 only?")
            two = await edit_and_resend(app, plan, SECOND, "List the breaking changes.")
            tree = c.tree
            # both read "Plan the 2.5 release — fork 2" and "— fork 3" (the demo's
            # two-week schedule is its first fork)
            await until(lambda: tree.title_of(two) == "List the breaking changes. — fork 3",
                        what="the second branch named by its question")
            assert tree.title_of(one) == "What changed since 2.4 only? — fork 2"
            # the list shows them so
            index = tree.index_for(one)
            assert index.data(Qt.ItemDataRole.DisplayRole) == tree.title_of(one)
            # renamed, then the rename undone: it had no title of its own, and is named
            # as before (an empty title is logged)
            assert tree.summary(one)["titleSet"] is False
            w.features["branches"].rename_to(one, "Since 2.4")
            await until(lambda: tree.title_of(one) == "Since 2.4", what="renamed")
            await app.idle()
            w.action("actionUndo").trigger()
            await until(lambda: tree.title_of(one) == "What changed since 2.4 only? — fork 2",
                        what="the rename undone")
            # the original goes on past the point: it is version 1 of 3
            await app.open(two)
            await until(lambda: w.transcript.fork_header() is not None, what="fork record")
            header = w.transcript.fork_header()
            assert header is not None
            where = header.findChild(QLabel, "siblingPosition")
            await until(lambda: where.text() == "3/3", what="the counter")
            assert where.accessibleName() == "Version 3 of 3 at this point"
            # where it was cut, in words: the question it replaced, no event number
            await until(lambda: SECOND in header.link.text(), what="the question's words")
            assert f"before your question “{SECOND}”" in header.link.text()
            assert "event" not in header.link.text()

    aloop(scenario())


def test_the_counter_counts_the_original_of_imported_branches(
        aloop: Any, tmp_path: Path) -> None:
    """A Claude Code session rewound twice: its main line goes on past the point, so each
    branch is one of three versions there, and stepping back from the first branch opens
    the main line at that point."""
    path = claude_rewound_twice(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, w = app.controller, app.window
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            await until(lambda: MAIN in c.tree.session_ids(), what="imported rows")
            await app.idle()
            first, second = forks_of(MAIN, c.tree.summary, c.tree.children_of)
            await app.open(first)
            await until(lambda: w.transcript.fork_header() is not None, what="fork record")
            header = w.transcript.fork_header()
            assert header is not None
            where = header.findChild(QLabel, "siblingPosition")
            assert where.text() == "2/3"  # it read "1/2": the main line was not counted
            # cut after the answer to the first question: said so, not "(event 4)"
            assert "after the answer “Let me read the build log.”" in header.link.text()
            assert "event" not in header.link.text()
            previous = header.findChild(QToolButton, "siblingPrevious")
            assert previous.isEnabled()
            previous.click()
            await until(lambda: c.current == MAIN, what="the original opened")
            assert w.selected_session() == MAIN
            w.features["branches"].update()
            assert not w.features["branches"].previous.isEnabled()  # no fork: no versions
            await app.open(second)
            await until(lambda: w.transcript.fork_header() is not None, what="its record")
            header = w.transcript.fork_header()
            assert header is not None
            assert header.findChild(QLabel, "siblingPosition").text() == "3/3"
            if SHOTS:
                w.tree.expandAll()
                await until(lambda: all(s in c.tree.questions for s in (first, second)),
                            what="the branches named")
                await app.idle()
                w.grab().save(str(Path(SHOTS) / "named-branches.png"))

    aloop(scenario())
