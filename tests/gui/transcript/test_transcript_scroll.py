"""A long transcript laid out in batches (the first screen paints before every row is
measured) still scrolls to any row and follows to its end."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from gui_harness import App, open_app, until
from long_scene import LONG, write_long
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from forkwise.gui.models.transcript_model import FIRST_PAGE

pytestmark = pytest.mark.gui


def shown(app: App, row: int) -> bool:
    view = app.window.transcript
    rect = view.visualRect(app.controller.transcript.index(row))
    return rect.isValid() and view.viewport().rect().intersects(QRect(rect))


async def open_first_page(app: App) -> None:
    """Open the long session at its top (its first page only: every session opens at its
    end unless asked, and `App.open` waits for every page)."""
    model = app.controller.transcript
    app.window.select_session(LONG)
    app.controller.open_session(LONG, from_end=False)
    await until(lambda: app.controller.current == LONG and model.rowCount() > 0
                and not model.fetching, what="its first page shown")
    await app.idle()


def test_a_long_transcript_scrolls_to_a_far_row_and_follows_to_its_end(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 700)  # two pages of events, a few hundred rows

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await open_first_page(app)
            assert model.loaded_seq == FIRST_PAGE  # a short first page: it paints sooner
            while model.canFetchMore():  # two more pages: a few hundred rows
                model.fetchMore()
                await until(lambda: not model.fetching, what="a page")
                if model.loaded_seq >= 500:
                    break
            rows = model.rowCount()
            assert rows > 150
            far = rows - 5
            view.scrollTo(model.index(far))
            assert shown(app, far)
            assert not shown(app, 0)
            view.scrollToTop()
            assert shown(app, 0)
            view.follow_to_end()
            await until(lambda: not model.canFetchMore() and not model.fetching,
                        what="every page fetched")
            await until(lambda: shown(app, model.rowCount() - 1), what="the last row in view")
            bar = view.verticalScrollBar()
            await until(lambda: bar.value() == bar.maximum(), what="scrolled to the end")
            bar.setValue(0)  # the person scrolls back up: the view stops following
            assert not view.following
            app.window.resize(1000, 700)  # a new layout, a new range
            await until(lambda: bar.maximum() != 0 and shown(app, 0), what="still at the top")
            assert bar.value() < bar.maximum()

    aloop(scenario())


def test_scrolling_to_the_bottom_of_the_loaded_pages_loads_the_next_not_all(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 4000)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await open_first_page(app)
            view.scrollToBottom()  # the bottom of what is loaded, far from the session's end
            await until(lambda: model.loaded_seq > FIRST_PAGE, what="the next page")
            for _ in range(20):  # let the layout and any further fetches run
                await asyncio.sleep(0.02)
            await until(lambda: not model.fetching, what="the pages asked for")
            assert not view.following
            assert not model.at_end
            assert model.loaded_seq <= FIRST_PAGE + 3 * model.page_size

    aloop(scenario())


def test_a_person_reading_the_end_sees_new_replies_arrive(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            sid = app.sid("Plan the 2.5 release")
            await app.open(sid)
            model, view = app.controller.transcript, app.window.transcript
            for n in range(4):  # enough turns that the transcript scrolls
                await app.client.prompt_and_wait(sid, f"one more question, number {n}")
            await until(lambda: model.rowCount() > 12, what="the replies shown")
            bar = view.verticalScrollBar()
            await until(lambda: bar.maximum() > 0, what="a transcript taller than its view")
            view.scrollToBottom()
            await app.client.prompt_and_wait(sid, "and the last one")
            await until(lambda: "and the last one" in " ".join(e.text for e in app.entries),
                        what="the new turn shown")
            await until(lambda: shown(app, model.rowCount() - 1), what="the newest row in view")

    aloop(scenario())


def test_a_fork_of_a_long_session_opens_at_its_fork_point_and_shows_earlier_turns_on_request(
        aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 3000)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await open_first_page(app)
            before = set(app.controller.tree.session_ids())
            app.window.action_fork.trigger()
            child = await until(lambda: next(iter(set(app.controller.tree.session_ids())
                                                   - before), None), what="the child")
            await until(lambda: app.controller.current == child and model.at_end
                        and not model.fetching, what="the child shown to its end")
            await app.idle()
            # only its last page was read, from a turn's start; the fork point is in view
            assert 0 < model.base < model.loaded_seq <= model.base + model.page_size + 1
            assert app.entries[-1].kind in ("fork", "model")
            assert any(e.kind == "fork" for e in app.entries[-3:])
            await until(lambda: shown(app, model.rowCount() - 1), what="the fork point in view")
            assert not view.earlier_button.isVisible()  # not at the top
            view.scrollToTop()
            await until(view.earlier_button.isVisible, what="the button at the top")
            first = app.entries[0]
            base, rows = model.base, model.rowCount()
            qtbot.mouseClick(view.earlier_button, Qt.MouseButton.LeftButton)
            await until(lambda: model.base < base and not model.fetching, what="earlier turns")
            added = model.rowCount() - rows
            assert added > 0
            assert (app.entries[added].seq, app.entries[added].text) == (first.seq, first.text)
            top = view.indexAt(view.viewport().rect().topLeft()).row()
            await until(lambda: view.indexAt(view.viewport().rect().topLeft()).row() == added,
                        what=f"the old first row kept on top (row {top})")
            base = model.base
            view.setFocus()
            qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
            await until(lambda: model.base < base and not model.fetching,
                        what="earlier turns by keyboard")

    aloop(scenario())


def test_the_last_page_arriving_under_the_reader_does_not_pull_the_view_along(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 700)  # the first page, a full page, then the last one

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await open_first_page(app)
            while not model.at_end:
                view.scrollToBottom()  # the bottom of what is loaded: the next page comes
                await until(lambda: model.fetching or model.at_end, what="a page asked for")
                await until(lambda: not model.fetching, what="the page")
                await app.idle()
            assert not view.following  # a page, not a live reply: the reader stays put

    aloop(scenario())


def test_page_up_and_down_go_through_a_long_imported_session(
    aloop: Any, tmp_path: Path
) -> None:
    """Page Up from the end of an imported Claude Code session to its first message, then
    Page Down back, in a window 650 px high: Qt's page step stayed on a message near the
    end (tall tool cards) and Page Up went no further (the keyboard's way to read back)."""
    from PySide6.QtTest import QTest

    from forkwise.core.bench.synth_sources import claude_projects

    (path,) = claude_projects(tmp_path / "claude", sessions=1, turns=12, seed=1)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(path)], tool="claude")
            (sid,) = report["imported"]
            await until(lambda: sid in app.controller.tree.session_ids(), what="imported")
            app.window.resize(1000, 650)
            await app.open(sid)
            view = app.window.transcript
            view.setFocus()
            rows = app.controller.transcript.rowCount()
            assert app.controller.transcript.base == 0  # every message loaded
            for key, end in ((Qt.Key.Key_PageUp, 0), (Qt.Key.Key_PageDown, rows - 1)):
                seen = [view.currentIndex().row()]
                while seen[-1] != end and len(seen) <= rows:
                    QTest.keyClick(view, key)
                    seen.append(view.currentIndex().row())
                assert seen[-1] == end, seen
                assert shown(app, end)
                assert all(a != b for a, b in itertools.pairwise(seen)), seen

    aloop(scenario())


def _in_view(app: App) -> list[int]:
    return [row for row in range(app.controller.transcript.rowCount()) if shown(app, row)]


def test_a_long_transcript_opened_at_its_end_lays_out_only_the_cards_near_the_view(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 1500)  # its last page: a few hundred rows

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            delegate = view.delegate
            view.rest_in_idle = False  # what the first layout does, not what idle time adds
            # the app opened its newest session as it started, and idle time may have laid
            # it all out since (on a busy machine): it is opened again, from nothing
            app.controller.open_session(None)
            app.controller.open_session(LONG)
            await until(lambda: app.controller.current == LONG and model.rowCount() > 0
                        and not model.fetching, what="its last page shown")
            await app.idle()
            rows = model.rowCount()
            laid_out = [r for r in range(rows) if delegate.is_laid_out(model.index(r))]
            assert rows > 100
            # the end is in view, laid out; most rows above it are not (yet)
            assert shown(app, rows - 1)
            assert len(laid_out) < rows // 3, (len(laid_out), rows)
            assert all(r in laid_out for r in _in_view(app))
            # scrolled to its top, the cards there are laid out for real and placed
            # one under the other at their real heights
            view.scrollToTop()
            await app.idle()
            top_rows = _in_view(app)
            assert top_rows
            assert top_rows[0] == 0
            option = QStyleOptionViewItem()
            for row in top_rows:
                index = model.index(row)
                assert not delegate.is_guessed(index), row
                rect = view.visualRect(index)
                assert rect.height() == delegate.sizeHint(option, index).height(), row
            for above, below in itertools.pairwise(top_rows):
                assert view.visualRect(model.index(above)).bottom() + 1 == \
                    view.visualRect(model.index(below)).top()

    aloop(scenario())


def test_left_idle_the_rest_of_a_long_transcript_is_laid_out_and_the_view_stays_put(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 1500)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            app.window.select_session(LONG)
            await until(lambda: app.controller.current == LONG and model.rowCount() > 100
                        and not model.fetching, what="its last page shown")
            await until(lambda: not view.delegate.guessed, what="every card laid out")
            await app.idle()
            assert shown(app, model.rowCount() - 1)  # still at the end
            bar = view.verticalScrollBar()
            assert bar.value() == bar.maximum()

    aloop(scenario())


def test_a_row_the_layout_s_batches_have_not_reached_is_gone_to_at_once(
        aloop: Any, tmp_path: Path) -> None:
    write_long(tmp_path, 700)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            model, view = app.controller.transcript, app.window.transcript
            await open_first_page(app)
            seen: list[tuple[bool, bool]] = []

            def go_to_the_last(_parent: object, first: int, last: int) -> None:
                # right as a page's rows arrive, before a layout placed them (as a search
                # hit or a fork point in a page just fetched is gone to)
                if last > view.batchSize() and not seen:
                    index = model.index(last)
                    placed = view.visualRect(index).isValid()
                    view.scrollTo(index)
                    seen.append((placed, shown(app, last)))

            model.rowsInserted.connect(go_to_the_last)
            while model.canFetchMore() and not seen:
                model.fetchMore()
                await until(lambda: not model.fetching, what="a page")
            model.rowsInserted.disconnect(go_to_the_last)
            assert seen, "no page brought rows past the first batch"
            placed, in_view = seen[0]
            assert not placed  # it had no place yet
            assert in_view  # and was gone to at once
            assert not shown(app, 0)

    aloop(scenario())
