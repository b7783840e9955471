"""Found walking through the app on a realistic store (the UX second pass): what a fork
cut before a message says, ... Real window and store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from PySide6.QtCore import Qt

from forkwise.gui.models.session_rows import WAITING_TEXT
from forkwise.gui.transcript.fork_header import ForkHeader

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")

PLAN = "Plan the 2.5 release"
FIRST = "We want to ship 2.5 in three weeks"
SHORTER = "2.5 release — two-week schedule"


def test_a_fork_before_a_message_names_that_message_not_its_id(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            plan = app.sid(PLAN)
            await app.open(plan)
            (first,) = app.rows("user", FIRST)
            anchor = app.entries[first].message_id
            assert anchor is not None
            # Edit and resend: a new branch cut before the message, the edit sent in it
            before = set(c.tree.session_ids())
            w.begin_edit(first)
            w.composer.edit.setPlainText("Plan the 2.6 release instead")
            w.composer.send_button.click()
            child = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None),
                                what="the branch")
            await until(lambda: c.current == child, what="the branch opened")
            header = await until(lambda: [h for h in w.transcript.findChildren(ForkHeader)
                                          if h.isVisible()], what="the fork record")
            link = header[0].link
            await until(lambda: FIRST in link.text(), what="the message's words")
            text = link.text()
            assert "before your question “" + FIRST in text, text
            assert anchor not in text  # not "message user:we-want-to:…"
            assert PLAN in text  # the source, as a link
            assert f"before your question “{FIRST}" in link.accessibleName()
            SHOTS and w.transcript.grab().save(str(Path(SHOTS) / "fork-before-header.png"))

    aloop(scenario())


def test_fork_point_words() -> None:
    from forkwise.core.reading.entries import FORK, Entry
    from forkwise.gui.transcript.fork_header import fork_point

    def entry(**data: Any) -> Entry:
        return Entry(FORK, 9, None, "", "", data=data)

    cut_before = entry(anchorMessage="user:q:1a2b", boundary=4, includeMessage=False)
    assert fork_point(cut_before) == "before a message"
    assert fork_point(cut_before, lambda _m: "Ship it?") == "before your question “Ship it?”"
    through = entry(anchorMessage="user:q:1a2b", boundary=8, includeMessage=True)
    assert fork_point(through) == "at a message"
    assert fork_point(through, lambda _m: "Ship it?", kind_of=lambda _m: "user") == (
        "at your question “Ship it?”")
    assert fork_point(through, lambda _m: "Yes.", kind_of=lambda _m: "assistant") == (
        "at the answer “Yes.”")
    # an imported branch has no anchor: the last message it copied names the point
    rewound = entry(boundary=38)
    assert fork_point(rewound, above=("assistant", "Let me read the build log.")) == (
        "after the answer “Let me read the build log.”")
    assert fork_point(rewound, above=("user", "Why?")) == "at your question “Why?”"
    assert fork_point(rewound) == "at event 38"
    assert fork_point(entry(boundary=0)) == "at the beginning"


def test_in_a_narrow_list_titles_keep_room_to_be_read(aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QTreeView

    from forkwise.gui.models.session_rows import ACTIVITY, MESSAGES, TITLE
    from forkwise.gui.sessions.tree_columns import KEY
    readable = 170  # px: "Clean up the build folder" was "Cl…er" in 90 px

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            header = w.tree.header()
            await app.idle()
            # the Cost column takes the room Messages had in a 1280 px window (Messages
            # steps aside first): the person turns Cost off, Messages has its room again
            assert header.isSectionHidden(MESSAGES)
            (cost,) = [a for a in w.columns.build_menu().actions()
                       if a.objectName() == "actionColumnCost"]
            cost.setChecked(False)
            qt_events()
            assert not header.isSectionHidden(MESSAGES)
            w.resize(560, 560)
            await app.idle()
            qt_events()
            SHOTS and w.grab().save(str(Path(SHOTS) / "narrow-list.png"))
            # the title column can be read: Messages stepped aside for it
            assert header.sectionSize(TITLE) >= readable, header.sectionSize(TITLE)
            assert header.isSectionHidden(MESSAGES)
            assert not header.isSectionHidden(ACTIVITY)
            # not remembered as a choice: saved, the column is still shown
            w.save_state()
            settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
            saved = QTreeView()
            saved.setModel(app.controller.proxy)
            assert saved.header().restoreState(settings.value(KEY))
            assert not saved.header().isSectionHidden(MESSAGES)
            saved.deleteLater()
            # room again: it comes back
            w.resize(1280, 800)
            await app.idle()
            qt_events()
            assert not header.isSectionHidden(MESSAGES)
            # a column the person turns on in the narrow list stays
            w.resize(560, 560)
            qt_events()
            menu = w.columns.build_menu()
            (messages,) = [a for a in menu.actions() if a.objectName() == "actionColumnMessages"]
            assert messages.isChecked()  # the person's choice: shown
            messages.setChecked(False)
            messages.setChecked(True)
            qt_events()
            assert not header.isSectionHidden(MESSAGES)

    aloop(scenario())


def test_an_approval_in_a_narrow_transcript_shows_what_is_to_be_approved(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QLabel, QPushButton

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            v = w.transcript
            await app.open(app.sid("Clean up the build folder"))  # waits for an approval
            for size in ((560, 560), (1280, 800)):
                w.resize(*size)
                await app.idle()
                qt_events()
                v.scrollToBottom()
                qt_events()
                label = v.viewport().findChild(QLabel, "approvalText")
                assert label is not None
                # the whole text is drawn: no word wider than the label, no line below it
                assert label.minimumSizeHint().width() <= label.width(), size
                assert label.heightForWidth(label.width()) <= label.height(), size
                for name in ("approveButton", "denyButton"):
                    button = v.viewport().findChild(QPushButton, name)
                    assert button.isVisible()
                    corner = button.mapTo(v.viewport(), button.rect().bottomRight())
                    assert v.viewport().rect().contains(corner), (size, name)
                    # the buttons do not cover the text
                    assert not button.geometry().intersects(label.geometry()), size
                SHOTS and v.grab().save(str(Path(SHOTS) / f"approval-{size[0]}.png"))

    aloop(scenario())


def test_an_empty_list_says_how_to_start_and_a_filter_that_matches_nothing_says_so(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtTest import QTest

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:  # an empty store
            w, c = app.window, app.controller
            w.install_agents()
            qt_events()
            label = w.tree.placeholder
            assert label.isVisible()
            assert "No sessions yet" in label.text()
            assert "New session (Ctrl+N)" in label.text()
            assert "Import sessions… (Ctrl+I)" in label.text()
            SHOTS and w.grab().save(str(Path(SHOTS) / "empty-list.png"))
            made = await app.client.create_session("First one")
            await until(lambda: c.tree.summary(made["id"]) is not None, what="the row")
            await until(lambda: not label.isVisible(), what="the hint gone with a row")
            # a filter that matches no title nor message
            QTest.keyClicks(w.filter_box, "zebra crossing")
            await until(lambda: label.isVisible() and "zebra crossing" in label.text(),
                        what="the no-match text")
            await until(lambda: "in its title or messages" in label.text(),
                        what="the messages searched too")
            assert "Escape clears the filter" in label.text()
            QTest.keyClick(w.filter_box, Qt.Key.Key_Escape)
            await until(lambda: not label.isVisible(), what="the rows back")

    aloop(scenario())


def test_tab_from_the_messages_reaches_an_approvals_buttons_before_the_composer(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window

            def tabs(count: int) -> list[str]:
                w.activateWindow()
                w.transcript.setFocus(Qt.FocusReason.TabFocusReason)
                names = []
                for _ in range(count):
                    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
                    focus = QApplication.focusWidget()
                    names.append(focus.objectName() if focus is not None else "")
                return names

            await app.open(app.sid("Clean up the build folder"))  # waits for an approval
            order = tabs(3)
            assert order == ["approveButton", "denyButton", "composer"], order
            await app.open(app.sid(SHORTER))  # a fork: its record links to its source
            # its links are not Tab stops (Enter on their rows opens them): one Tab to the
            # composer
            assert tabs(1) == ["composer"]
            # the arrow keys keep the keyboard in the list, over rows with links too
            view = w.transcript
            view.setFocus(Qt.FocusReason.TabFocusReason)
            rows = range(app.controller.transcript.rowCount())
            linked = [r for r in rows if view.indexWidget(app.controller.transcript.index(r))]
            view.setCurrentIndex(app.controller.transcript.index(linked[-1] - 1))
            QTest.keyClick(view, Qt.Key.Key_Down)
            assert view.currentIndex().row() == linked[-1]
            assert QApplication.focusWidget() is view

    aloop(scenario())


def test_a_source_shows_where_its_forks_continue(aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtTest import QTest

    from forkwise.gui.transcript.fork_marks import ForkMark

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            view = w.transcript
            w.install_agents()
            plan, shorter = app.sid(PLAN), app.sid(SHORTER)

            def marks() -> dict[int, ForkMark]:
                out = {}
                for row in range(c.transcript.rowCount()):
                    widget = view.indexWidget(c.transcript.index(row))
                    if isinstance(widget, ForkMark):
                        out[row] = widget
                return out

            await app.open(plan)
            point = c.tree.summary(shorter)["seedLength"]  # type: ignore[index]
            found = await until(marks, what="a fork mark")
            (row, mark), = found.items()
            assert mark.forks == [shorter]  # the subagent has its own link, not a mark
            assert SHORTER in mark.text()
            # under the row the fork was cut after
            assert app.entries[row].seq <= point < app.entries[row + 1].seq
            await app.idle()
            qt_events()
            assert mark.isVisible()
            rect = view.visualRect(c.transcript.index(row))
            assert rect.contains(mark.geometry())
            SHOTS and view.grab().save(str(Path(SHOTS) / "fork-mark.png"))
            mark.click()
            await until(lambda: c.current == shorter, what="the fork opened")
            # two retries of the first answer: one mark, the two forks to choose from
            await app.open(plan)
            (answer, *_rest) = app.rows("assistant")
            before = set(c.tree.children_of(plan))
            c.retry(answer)
            await until(lambda: len(set(c.tree.children_of(plan)) - before) == 1, what="one")
            await until(lambda: c.current in set(c.tree.children_of(plan)) - before,
                        what="the retry opened")
            await app.open(plan)
            (answer, *_rest) = app.rows("assistant")
            c.retry(answer)
            await until(lambda: len(set(c.tree.children_of(plan)) - before) == 2, what="two")
            new = sorted(set(c.tree.children_of(plan)) - before)
            await until(lambda: c.current in new, what="the second retry opened")
            await app.open(plan)
            both = await until(lambda: [m for m in marks().values() if len(m.forks) == 2],
                               what="the mark of both")
            assert sorted(both[0].forks) == new
            assert "2 forks" in both[0].text()
            assert both[0].choices is not None
            names = [a.objectName() for a in both[0].choices.actions()]
            assert names == [f"openFork:{sid}" for sid in both[0].forks]
            both[0].choices.actions()[1].trigger()
            await until(lambda: c.current == both[0].forks[1], what="the chosen fork")
            # from the keyboard: Enter on the row of a one-fork mark opens it
            await app.open(plan)
            (row, mark), = [(r, m) for r, m in marks().items() if m.forks == [shorter]]
            view.setFocus()
            view.setCurrentIndex(c.transcript.index(row))
            QTest.keyClick(view, Qt.Key.Key_Return)
            await until(lambda: c.current == shorter, what="opened by Enter")

    aloop(scenario())


def test_in_a_smaller_window_the_list_gives_way_to_the_messages(
        aloop: Any, tmp_path: Path) -> None:

    from forkwise.gui.shell.pane_balance import balanced

    # the rule: the list gives way down to its floor, then takes back what it wanted
    assert balanced([440, 240], 500) == [300, 380]
    assert balanced([500, 780], 500) == [500, 780]
    assert balanced([300, 980], 500) == [500, 780]
    assert balanced([320, 500], 500) == [380, 440]

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.install_agents()
            await app.open(app.sid(PLAN))
            qt_events()
            wide = w.splitter.sizes()
            w.resize(760, 520)
            await app.idle()
            qt_events()
            SHOTS and w.grab().save(str(Path(SHOTS) / "smaller-window.png"))
            left, right = w.splitter.sizes()
            assert right >= 440, (left, right)  # was 440 of list beside a 240 px transcript
            assert left >= 300
            w.resize(1280, 800)
            await app.idle()
            qt_events()
            assert w.splitter.sizes() == wide  # the list takes its width back

    aloop(scenario())


def test_a_cut_header_keeps_the_model_and_state_whole(aloop: Any, tmp_path: Path) -> None:

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid("Clean up the build folder"))  # its turn waits
            label = w.header_label
            state = WAITING_TEXT
            assert label.text() == f"Clean up the build folder  ·  forkwise-offline  ·  {state}"
            for width, rest in ((760, f"  ·  forkwise-offline  ·  {state}"),
                                (560, f"  ·  {state}")):
                w.resize(width, 560)
                await app.idle()
                qt_events()
                shown = label.shown_text()
                assert "…" in shown  # the title is cut, not the rest
                assert shown.endswith(rest), (width, shown)
                assert shown.startswith("Clean")
                fits = label.fontMetrics().horizontalAdvance(shown)
                assert fits <= label.contentsRect().width()
                SHOTS and label.grab().save(str(Path(SHOTS) / f"header-cut-{width}.png"))

    aloop(scenario())


def test_tab_goes_down_the_links_of_a_transcript(aloop: Any, tmp_path: Path) -> None:

    from forkwise.gui.transcript.fork_marks import ForkMark

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            w.install_agents()
            plan = app.sid(PLAN)
            await app.open(plan)
            # a second fork point, above the demo's: an edit of the first question
            (first, *_r) = app.rows("user", FIRST)
            before = set(c.tree.children_of(plan))
            w.begin_edit(first)
            w.composer.edit.setPlainText("Ship 2.5 in two weeks: what should the plan be?")
            w.composer.send_button.click()
            await until(lambda: c.current in set(c.tree.children_of(plan)) - before,
                        what="the branch opened")
            await app.open(plan)
            view = w.transcript
            marks = await until(lambda: sorted(
                (r, view.indexWidget(c.transcript.index(r)))
                for r in range(c.transcript.rowCount())
                if isinstance(view.indexWidget(c.transcript.index(r)), ForkMark)), what="marks")
            assert len(marks) == 2
            # neither is a Tab stop: Enter on its row opens what it links to
            for _row, mark in marks:
                assert not mark.focusPolicy() & Qt.FocusPolicy.TabFocus

    aloop(scenario())
