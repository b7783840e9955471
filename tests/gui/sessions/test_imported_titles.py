"""Imported sessions in the tree and the transcript (issue 19's walk): sibling branches of
a Claude Code session renamed after they left it, and a Codex fork of a named thread, read
as forks ("<title> — fork N"), not as the first question they share; a transcript does not
open with a title row that repeats the question under it. Real files, real app."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from codex_fixtures import ROLLED_BACK, home_with_fork, rolled_back_twice, thread_id
from gui_harness import open_app, qt_events, until
from rewound_scene import QUESTION, SID, claude_rewound_twice

from forkwise.core.reading.entries import TITLE

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")


def test_sibling_branches_of_imported_sessions_read_as_forks(
        aloop: Any, tmp_path: Path) -> None:
    path = claude_rewound_twice(tmp_path / "claude")
    codex = home_with_fork(tmp_path / "codex")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            files = [path, *sorted((codex / "sessions").rglob("rollout-*.jsonl"))]
            report = await app.client.import_files([str(p) for p in files])
            assert not report["failed"], report
            tree = app.controller.tree
            main = f"claude-{SID}"
            await until(lambda: main in tree.session_ids(), what="imported rows")
            await app.idle()
            branches = [s for s in tree.session_ids()
                        if (tree.summary(s) or {}).get("parentSession") == main]
            assert len(branches) == 2
            # the branches were named by the question they share with the main line, then
            # "Release build on macOS — fork N" (alike but for N): now by the question
            # each asked of its own, once read
            await until(lambda: all(s in tree.questions for s in branches),
                        what="the branches' own questions")
            titles = sorted(tree.title_of(s) for s in branches)
            assert titles == ["check the SDK version — fork 2",
                              "check the signing step — fork 1"], titles
            assert tree.title_of(main) == "Release build on macOS"
            fork = f"codex-{thread_id(2)}"
            assert tree.title_of(fork) == "Fix the parser bug — fork 1"
            if SHOTS:
                app.window.tree.expandAll()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "imported-branch-titles.png"))

    aloop(scenario())


def test_the_rollbacks_of_a_codex_thread_read_as_numbered_forks(
        aloop: Any, tmp_path: Path) -> None:
    """Two rollbacks of one Codex thread: two rows "<question> — fork N", named by what
    each asked after the rollback and numbered in the order the thread left them (they
    both read "<title> (rolled back)", then "<title> — fork N")."""
    rollout = rolled_back_twice()
    path = rollout.write(tmp_path / "codex")
    first, dropped, again, _last = ROLLED_BACK

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            tree = app.controller.tree
            main = f"codex-{rollout.tid}"
            await until(lambda: len(tree.session_ids()) == 3, what="imported rows")
            await app.idle()
            assert tree.title_of(main) == first
            branches = {s: tree.summary(s) or {} for s in tree.session_ids() if s != main}
            assert {b.get("parentSession") for b in branches.values()} == {main}
            # which branch holds which tail: by its first question past the shared one
            await until(lambda: all(s in tree.questions for s in branches),
                        what="the branches' own questions")
            titled = {}
            for sid in branches:
                events = await app.client.events(sid)
                asked = [e["parts"][0]["text"] for e in events
                         if e["type"] == "message" and e["role"] == "user"]
                titled[asked[1]] = tree.title_of(sid)
            # each named by the question it asked of its own (both read "<title> — fork N")
            assert titled == {dropped[0]: f"{dropped[0]} — fork 1",
                              again[0]: f"{again[0]} — fork 2"}
            if SHOTS:
                app.window.tree.expandAll()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "codex-rollbacks.png"))

    aloop(scenario())


def test_an_imported_transcript_shows_no_title_row_repeating_its_first_question(
        aloop: Any, tmp_path: Path) -> None:
    path = claude_rewound_twice(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            main = f"claude-{SID}"
            await until(lambda: main in app.controller.tree.session_ids(), what="rows")
            await app.open(main)
            model = app.window.transcript.model()
            await until(lambda: model.rowCount() > 0, what="transcript rows")
            await app.idle()
            entries = model.builder.entries
            titles = [e.text for e in entries if e.kind == TITLE]
            # the importer titled the session by its first question before the rename:
            # that row said nothing the question below it does not
            assert titles == ["Release build on macOS"], titles
            assert entries[0].text == QUESTION
            if SHOTS:
                app.window.transcript.scrollToTop()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "imported-no-title-row.png"))

    aloop(scenario())


def claude_projects(root: Path) -> dict[str, str]:
    """Three Claude Code sessions from two projects, one under the home folder with a long
    path: session id -> its working folder."""
    long_home = str(Path.home() / "work" / "clients" / "acme-corporation" / "payments"
                    / "services" / "settlement-api")
    folders = {
        "11111111-1111-4111-8111-111111111111": long_home,
        "22222222-2222-4222-8222-222222222222": "/srv/billing",
        "33333333-3333-4333-8333-333333333333": long_home,
    }
    for n, (sid, cwd) in enumerate(folders.items()):
        t = cf.Transcript(sid, cwd=cwd)
        t.exchange(f"question {n} about {Path(cwd).name}", f"answer {n}")
        cf.write_old(t, root)
    return folders


def test_the_folder_column_and_filter_tell_projects_apart(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtCore import Qt

    from forkwise.gui.models.session_rows import FOLDER, SUMMARY_ROLE
    from forkwise.gui.sessions.tree_columns import FOLDER_CHOSEN

    folders = claude_projects(tmp_path / "claude")
    files = sorted((tmp_path / "claude").rglob("*.jsonl"))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w = app.window
            w.resize(1280, 800)
            header = w.tree.header()
            await app.idle()
            assert header.isSectionHidden(FOLDER)  # no sessions, no folders to tell apart
            report = await app.client.import_files([str(p) for p in files])
            assert not report["failed"], report
            tree = app.controller.tree
            await until(lambda: len(tree.session_ids()) == 3, what="imported rows")
            await app.idle()
            # sessions of two folders: the column shows by itself, each folder's name; the
            # whole path (home as ~) is in the row's tooltip
            assert not header.isSectionHidden(FOLDER)
            proxy = app.controller.proxy
            shown = {str(proxy.index(r, 0).data(SUMMARY_ROLE)["id"]):
                     proxy.index(r, FOLDER).data() for r in range(proxy.rowCount())}
            assert shown == {f"claude-{sid}": Path(cwd).name for sid, cwd in folders.items()}
            long_short = "~/work/clients/acme-corporation/payments/services/settlement-api"
            tips = {proxy.index(r, FOLDER).data(Qt.ItemDataRole.ToolTipRole)
                    for r in range(proxy.rowCount())}
            assert {next(line for line in tip.splitlines() if line.startswith("Folder: "))
                    for tip in tips} == {f"Folder: {long_short}", "Folder: /srv/billing"}
            assert w.tree.textElideMode() == Qt.TextElideMode.ElideMiddle
            # sorted by folder: the two of one project side by side
            w.tree.sortByColumn(FOLDER, Qt.SortOrder.AscendingOrder)
            await app.idle()
            order = [proxy.index(r, FOLDER).data() for r in range(proxy.rowCount())]
            assert order == ["billing", "settlement-api", "settlement-api"]
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "imported-folder-column.png"))
            def listed() -> set[str]:
                return {str(proxy.index(r, 0).data(SUMMARY_ROLE)["id"])
                        for r in range(proxy.rowCount())}

            one, other, three = (f"claude-{sid}" for sid in folders)
            # narrowed to one project by the filter box, words still looked for as well
            w.filter_box.setText("folder:settlement")
            await until(lambda: listed() == {one, three}, what="one project's rows")
            w.filter_box.setText('question folder:"/srv/billing"')
            await until(lambda: listed() == {other}, what="the other project's row")
            w.filter_box.setText("folder:settlement question 2")
            await until(lambda: listed() == {three}, what="a title in that project")
            w.filter_box.setText("folder:~/work/clients")  # as the tooltip writes it
            await until(lambda: listed() == {one, three}, what="by the folder as shown")
            w.filter_box.setText("folder:settlement question 1")
            await until(lambda: listed() == set(), what="no such title in that project")
            w.filter_box.setText("folder:settlement question 2")
            await until(lambda: listed() == {three}, what="a title in that project")
            if SHOTS:
                await app.idle()
                w.grab().save(str(Path(SHOTS) / "imported-folder-filter.png"))
            w.filter_box.setText("")
            await until(lambda: listed() == {one, other, three}, what="every row again")
            # hidden from the header's menu: the person's choice, kept
            menu = w.columns.build_menu()
            (action,) = [a for a in menu.actions() if a.objectName() == "actionColumnFolder"]
            assert action.isChecked()
            action.setChecked(False)
            qt_events()
            assert header.isSectionHidden(FOLDER)
            assert w.settings.value(FOLDER_CHOSEN) in (False, "false")
            w.columns.offer_folder(True)  # the rows no longer decide
            assert header.isSectionHidden(FOLDER)

    aloop(scenario())


def test_titles_keep_the_room_the_folder_names_leave(aloop: Any, tmp_path: Path) -> None:
    """Folder is as wide as the names it shows (up to a bound), Messages steps aside for
    Title at 1280x800, and Title takes the rest of the list, in a wide window too; a width
    the person sets is kept."""
    from PySide6.QtCore import Qt

    from forkwise.gui.models.session_rows import ACTIVITY, COST, FOLDER, MESSAGES, TITLE
    from forkwise.gui.sessions.tree_columns import FOLDER_MOST, FOLDER_SIZED

    claude_projects(tmp_path / "claude")
    files = sorted((tmp_path / "claude").rglob("*.jsonl"))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w = app.window
            tree = w.tree
            header = tree.header()
            w.resize(1280, 800)
            await app.idle()
            report = await app.client.import_files([str(p) for p in files])
            assert not report["failed"], report
            await until(lambda: len(app.controller.tree.session_ids()) == 3, what="rows")
            await app.idle()
            qt_events()
            metrics = tree.fontMetrics()

            def widths() -> dict[int, int]:
                return {c: header.sectionSize(c)
                        for c in (TITLE, ACTIVITY, MESSAGES, FOLDER, COST)}

            def title_room() -> int:
                """What the narrowest title cell leaves for its text: its width past the
                branch, less the icon and the margins around it and the text (28 px, as
                painted here)."""
                proxy = app.controller.proxy
                rects = [tree.visualRect(proxy.index(r, TITLE)) for r in range(proxy.rowCount())]
                return min(r.width() for r in rects) - 28

            at_1280 = widths()
            longest = max(metrics.horizontalAdvance(name) for name in ("settlement-api", "billing"))
            # the names shown whole, and no wider than they need
            assert longest < at_1280[FOLDER] <= min(longest + 24, FOLDER_MOST), at_1280
            # Messages stepped aside; Title has the rest of the list
            assert header.isSectionHidden(MESSAGES)
            room = tree.viewport().width()
            assert header.isSectionHidden(COST)  # (its cost is in the row's tooltip)
            assert at_1280[TITLE] == room - at_1280[ACTIVITY] - at_1280[FOLDER], at_1280
            # a fork's title as the tree names it is read whole (beside a Folder of 140 px
            # and Messages, Title had 235 px and the text 187: it was cut)
            title = "Release build on macOS — fork 2"
            assert metrics.horizontalAdvance(title) <= title_room(), (title_room(), at_1280)
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "folder-names-1280.png"))
            # a wide window: the list keeps its width; widened by the person, Title takes it
            w.resize(2200, 1000)
            await app.idle()
            qt_events()
            w.splitter.setSizes([900, 1300])
            await app.idle()
            qt_events()
            wide = widths()
            assert wide[FOLDER] == at_1280[FOLDER]
            assert not header.isSectionHidden(MESSAGES)  # room for it again
            room = tree.viewport().width()
            assert wide[TITLE] == (room - wide[ACTIVITY] - wide[MESSAGES] - wide[FOLDER]
                                   - wide[COST]) > 500
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "folder-names-wide.png"))
            # a longer name widens the column, up to its bound
            w.columns.name_folders(["/srv/a-folder-with-a-rather-long-name-indeed"], more=True)
            assert header.sectionSize(FOLDER) == FOLDER_MOST
            # the person's width is kept when more folders come
            header.resizeSection(FOLDER, FOLDER_MOST + 40)  # as a drag of its edge does
            assert w.settings.value(FOLDER_SIZED) in (True, "true")
            w.columns.name_folders(["/srv/x"])
            assert header.sectionSize(FOLDER) == FOLDER_MOST + 40
            assert tree.textElideMode() == Qt.TextElideMode.ElideMiddle

    aloop(scenario())
