"""Dates and layout as a daily user meets them: one date format with the time everywhere
(an earlier year's session too), the list's share of a wide window and the transcript's
reading width, a saved window size on a larger screen, a banner that moves nothing, a
rename that is not activity, a pi branch whose parent file is gone, and the Import
dialog's whole result. Real window, real pi files imported through the host."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pi_fixtures as pf
import pytest
from gui_harness import open_app, qt_events, until
from PySide6.QtCore import QModelIndex, Qt

from forkwise.gui.models.session_rows import ACTIVITY, COST, MESSAGES, TITLE, format_when
from forkwise.gui.transcript.transcript_delegate import MARGIN_X

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
PI_ID = "0193a1b2-0000-7000-8000-000000000001"
#: a date with its time, the year when it is not this one: "08 Dec 2025 22:41"
WHEN = re.compile(r"^\d\d \w{3}( \d{4})? \d\d:\d\d$")


def pi_home(root: Path) -> tuple[Path, Path]:
    """A pi session of December 2025, and a branch of it whose parent file is gone."""
    folder = root / "pi" / "sessions" / "--home-ada-project--"
    main = pf.settled(pf.coding_session(PI_ID).write(folder))
    gone = folder / "2025-12-01T10-00-00-000Z_0193a1b2-0000-7000-8000-0000000000aa.jsonl"
    child = pf.PiSession("0193a1b2-0000-7000-8000-0000000000ab", parent_session=str(gone))
    child.user("Carry on from where the deleted session stopped")
    child.assistant("Carrying on.")
    return main, pf.settled(child.write(folder))


def cell(app: Any, sid: str, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    index = app.controller.proxy.mapFromSource(app.controller.tree.index_for(sid, column))
    return index.data(role)


def test_an_earlier_years_session_shows_one_date_format_with_time_everywhere(
        aloop: Any, tmp_path: Path) -> None:
    main, _child = pi_home(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            report = await app.client.import_files([str(main)])
            assert not report["failed"], report
            sid = report["imported"][0]
            await until(lambda: sid in app.controller.tree.session_ids(), what="the row")
            updated = str(app.controller.tree.summary(sid)["updated"])  # type: ignore[index]
            assert updated.startswith("2025-")
            shown = cell(app, sid, ACTIVITY)
            assert WHEN.match(shown), shown
            assert shown == format_when(updated)
            assert " 2025 " in shown  # the year, and the time after it
            # the list makes room for the year: the whole date shows
            w = app.window
            qt_events()
            metrics = w.tree.fontMetrics()
            assert metrics.horizontalAdvance(shown) < w.tree.header().sectionSize(ACTIVITY) - 8
            # the transcript's cards say when in the same words
            await app.open(sid)
            (question,) = app.rows("user", "Read the README")
            entry = app.entries[question]
            from forkwise.gui.transcript.transcript_html import entry_html

            assert format_when(entry.ts) in entry_html(entry, w.transcript.palette())
            assert " 2025 " in format_when(entry.ts)
            # and so do the search results
            w.show_search()
            panel = w.search_panel
            panel.box.setText("summarise")
            await until(lambda: panel.model.rowCount() > 0, what="a hit")
            # hits are grouped under their session's header row: the first hit's row
            text = panel.model.index(panel.model.hit_row(0)).data(Qt.ItemDataRole.DisplayRole)
            stamp = text.split(" · ")[0]
            assert WHEN.match(stamp), text
            assert " 2025 " in stamp

    aloop(scenario())


def test_a_wide_window_gives_the_list_its_share_and_caps_the_reading_width(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.resize(1920, 1080)
            await app.open(app.sid("Plan the 2.5 release"))
            await app.idle()
            qt_events()
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "wide-window.png"))
            left, right = w.splitter.sizes()
            assert 600 <= left <= 720, (left, right)
            header = w.tree.header()
            # Messages and Cost both have room beside a readable title
            assert not header.isSectionHidden(MESSAGES)
            assert not header.isSectionHidden(COST)
            assert header.sectionSize(TITLE) >= 240
            # a card is a column of reading width in the transcript's middle
            view = w.transcript
            row = app.rows("assistant")[0]
            rect = view.visualRect(app.controller.transcript.index(row))
            card = view.delegate.card_rect(rect)
            chars = card.width() / view.fontMetrics().averageCharWidth()
            assert chars <= 115, chars
            assert card.width() < view.viewport().width() - 2 * MARGIN_X - 200
            assert abs((card.left() - rect.left()) - (rect.right() - card.right())) <= 2
            # the person drags the handle: the list keeps that width as the window changes
            w.splitter.moveSplitter(560, 1)
            w.resize(1700, 1000)
            await app.idle()
            qt_events()
            assert w.splitter.sizes()[0] == 560
            # back at the default size: the list's 500 px, the transcript as wide as before
            w.resize(1280, 800)
            w.pane_balance.chosen = False
            w.pane_balance.balance()
            assert w.splitter.sizes()[0] == 500

    aloop(scenario())


SIZE_SCRIPT = r"""
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.notify import Notifier
from forkwise.gui.shell.main_window import MainWindow
settings = QSettings(sys.argv[1], QSettings.Format.IniFormat)
window = MainWindow(Controller(None, Notifier()), settings, rest_later=True)
if sys.argv[2] == "save":
    window.resize(1280, 800)
window.show()
app.processEvents()
if sys.argv[2] == "save":
    window.save_state()
print(json.dumps({"size": [window.width(), window.height()],
                  "screen": window.screen().availableGeometry().width()}))
"""


def test_a_window_saved_at_1280x800_reopens_at_that_size_on_a_larger_screen(
        tmp_path: Path) -> None:
    def run(width: int, height: int, what: str) -> dict[str, Any]:
        screens = tmp_path / f"screen-{width}.json"
        screens.write_text(json.dumps({"screens": [
            {"name": "screen", "x": 0, "y": 0, "width": width, "height": height,
             "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
        env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screens}",
                   QT_API="pyside6", QT_LOGGING_RULES="qt.qpa.*=false")
        done = subprocess.run([sys.executable, "-c", SIZE_SCRIPT, str(tmp_path / "gui.ini"),
                               what], capture_output=True, text=True, env=env, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        assert seen["screen"] == width
        return seen

    assert run(1440, 900, "save")["size"] == [1280, 800]  # a laptop's screen
    assert run(2560, 1440, "open")["size"] == [1280, 800]  # a larger monitor


def test_the_banner_does_not_move_the_transcript(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid("Plan the 2.5 release"))
            qt_events()
            before = w.transcript.geometry()
            app.notifier.error(RuntimeError("the host went away"), "Sending")
            await app.idle()
            qt_events()
            banner = w.banner
            assert banner.isVisible()
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "banner-over-transcript.png"))
            assert w.transcript.geometry() == before
            # it lies over the transcript's top, whole and readable
            assert before.contains(banner.geometry())
            assert banner.label.height() >= banner.label.heightForWidth(banner.label.width())
            banner.close_button.click()
            qt_events()
            assert not banner.isVisible()
            assert w.transcript.geometry() == before

    aloop(scenario())


def test_a_rename_is_not_activity(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            sid = app.sid("Quick question about tabs vs spaces")
            proxy = c.proxy

            def order() -> list[str]:
                return [proxy.index(r, 0, QModelIndex()).data(Qt.ItemDataRole.UserRole + 1)
                        or proxy.index(r, 0, QModelIndex()).data() for r in
                        range(proxy.rowCount(QModelIndex()))]

            before, when = order(), cell(app, sid, ACTIVITY)
            c.apply_row(await app.client.rename_session(sid, "Tabs or spaces, settled"))
            await app.idle()
            qt_events()
            assert cell(app, sid, TITLE) == "Tabs or spaces, settled"
            assert cell(app, sid, ACTIVITY) == when
            after = order()
            assert [x if x != "Tabs or spaces, settled" else "Quick question about tabs vs spaces"
                    for x in after] == before

    aloop(scenario())


def test_a_pi_branch_whose_parent_file_is_gone_shows_the_pi_badge(
        aloop: Any, tmp_path: Path) -> None:
    _main, child = pi_home(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            report = await app.client.import_files([str(child)])
            assert not report["failed"], report
            sid = report["imported"][0]
            await until(lambda: sid in app.controller.tree.session_ids(), what="the row")
            summary = app.controller.tree.summary(sid)
            assert summary is not None
            assert summary["relation"] == "fork"  # (its parent file is not there to name)
            assert summary["parentSession"] not in app.controller.tree.session_ids()
            from forkwise.gui.widgets.badges import badge_icon
            from forkwise.gui.widgets.source_badges import source_icon

            icon = cell(app, sid, TITLE, Qt.ItemDataRole.DecorationRole)
            assert icon.cacheKey() == source_icon("pi").cacheKey()
            assert icon.cacheKey() != badge_icon("fork").cacheKey()

    aloop(scenario())


def test_the_import_dialogs_result_is_shown_whole(aloop: Any, tmp_path: Path) -> None:
    folder = tmp_path / "to-import"
    folder.mkdir()
    for n in range(6):  # files that cannot be read: a line each in the result
        (folder / f"broken-session-file-with-a-long-name-{n}.jsonl").write_text("not json\n")
    pf.settled(pf.coding_session().write(folder))

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            from forkwise.gui.features.agents.import_dialogs import ImportDialog

            dialog = ImportDialog(app.window)
            dialog.show()
            await app.idle()
            dialog.path.setText(str(folder))
            dialog.start()
            await until(lambda: "imported" in dialog.summary.text(), what="the result")
            qt_events()
            if SHOTS:
                dialog.grab().save(str(Path(SHOTS) / "import-result.png"))
            label = dialog.summary
            assert label.text().count("\n") >= 5
            assert label.height() >= label.heightForWidth(label.width()), label.height()
            assert label.geometry().bottom() < dialog.buttons.geometry().top()
            dialog.close()

    aloop(scenario())
