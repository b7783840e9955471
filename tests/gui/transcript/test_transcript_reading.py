"""Reading an imported Claude Code session in the transcript: the Markdown renders (a table
is a table, a link opens in the browser), code keeps every space in a monospace font, an
Edit is a red/green diff, a failed call is marked. Real window, real store, real-format
session (the one the document export tests read)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from page_shots import chromium_shot, side_by_side
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QFontInfo, QImage, QTextCursor, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QLineEdit, QWidget
from reading_scene import SHOTS, SID, card_doc, opened, write_session

from forkwise.core.reading.entries import Entry
from forkwise.gui.transcript.transcript_html import entry_html

pytestmark = pytest.mark.gui


def find(doc: QTextDocument, text: str) -> QTextCursor:
    cursor = doc.find(text)
    assert not cursor.isNull(), f"{text!r} not in {doc.toPlainText()!r}"
    return cursor


def shown_dialogs() -> list[QFileDialog]:
    return [d for d in QApplication.topLevelWidgets()
            if isinstance(d, QFileDialog) and d.objectName() == "exportDialog"
            and d.isVisible()]


class Browser(QObject):
    """Where QDesktopServices sends https links while the test runs."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def test_markdown_code_diff_and_failures_render(aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            view = app.window.transcript
            (answer,) = app.rows("assistant", "| step | file |")
            doc = card_doc(app, answer)
            # a Markdown table is a table, its words in cells (not pipes)
            cell = find(doc, "app.py")
            assert cell.currentTable() is not None
            assert "|" not in doc.toPlainText()
            # code keeps its indentation in a monospace font, highlighted
            code = find(doc, "return 3.14")
            line = code.block().text()
            assert line.startswith("    return 3.14"), repr(line)
            assert QFontInfo(code.charFormat().font()).fixedPitch()
            colours = {find(doc, word).charFormat().foreground().color().name()
                       for word in ("def", "area", "return")}
            assert len(colours) > 1, colours  # keywords and names differ
            # strikethrough and a task list
            assert find(doc, "rewrite it").charFormat().fontStrikeOut()
            assert "☑" in doc.toPlainText()
            # an Edit is its recorded diff: the removed row red, the added green
            (edit,) = [i for i in app.rows("tool") if app.entries[i].data.get("name") == "Edit"]
            diff = card_doc(app, edit)
            added = find(diff, "+    return run(fast=True)")
            removed = find(diff, "-    return run()")
            for cursor, colour in ((added, "#e6ffec"), (removed, "#ffebe9")):
                table = cursor.currentTable()
                assert table is not None
                background = table.cellAt(cursor).format().background().color().name()
                assert background == colour
            if SHOTS:
                w = app.window
                w.resize(1280, 860)
                view.scrollTo(app.controller.transcript.index(edit, 0),
                              view.ScrollHint.PositionAtTop)
                await asyncio.sleep(0.2)
                w.grab().save(str(Path(SHOTS) / "transcript-tools.png"))
                # the session from its question to the edit, beside its HTML export drawn
                # by a browser from the same question
                question = max(i for i in app.rows("user") if i < edit)
                w.resize(1200, 1180)
                view.scrollTo(app.controller.transcript.index(question, 0),
                              view.ScrollHint.PositionAtTop)
                await asyncio.sleep(0.2)
                window = w.grab().toImage()
                page = tmp_path / "session.html"
                await app.client.export_session(SID, "html", out=str(page))
                drawn = tmp_path / "page.png"
                chromium_shot(page, f"m-{app.entries[question].seq}", (900, 1180), drawn)
                side_by_side(window, QImage(str(drawn)), Path(SHOTS) / "transcript-and-export.png")
                w.resize(1280, 860)
                view.scrollTo(app.controller.transcript.index(answer, 0),
                              view.ScrollHint.PositionAtTop)
                view.verticalScrollBar().setValue(view.verticalScrollBar().value() - 260)
                await asyncio.sleep(0.2)
                w.grab().save(str(Path(SHOTS) / "transcript-reading.png"))
            # a shell command reads `$ cmd`; a failed call says so
            calls = {str(app.entries[i].data["args"].get("command")): app.entries[i]
                     for i in app.rows("tool") if app.entries[i].data.get("name") == "Bash"}
            assert "$ ls -la src" in card_doc(app, app.entries.index(calls["ls -la src"])
                                              ).toPlainText()
            palette = view.palette()
            assert 'class="failed"' in entry_html(calls["pytest -q"], palette)
            assert 'class="failed"' not in entry_html(calls["ls -la src"], palette)
            # a link opens in the browser
            browser = Browser()
            QDesktopServices.setUrlHandler("https", browser, "open")
            try:
                index = app.controller.transcript.index(answer)
                view.scrollTo(index)
                await until(lambda: view.visualRect(index).isValid(), what="answer shown")
                link = find(doc, "https://example.org/docs")
                block = link.block()
                at = link.selectionStart() - block.position() + 3
                line = block.layout().lineForTextPosition(at)
                corner = doc.documentLayout().blockBoundingRect(block).topLeft()
                where = QPoint(int(corner.x() + line.cursorToX(at)[0]),
                               int(corner.y() + line.y() + line.height() / 2))
                card = view.delegate.card_rect(view.visualRect(index))  # its column
                point = card.topLeft() + QPoint(10, 10) + where
                assert view.delegate.anchor_at(index, point) == "https://example.org/docs"
                QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                                 Qt.KeyboardModifier.NoModifier, point)
                await until(lambda: browser.opened, what="the link opened")
                assert browser.opened == ["https://example.org/docs"]
            finally:
                QDesktopServices.unsetUrlHandler("https")

    aloop(scenario())


def test_every_entry_of_the_session_renders(aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            palette = app.window.transcript.palette()
            for entry in app.entries:
                assert isinstance(entry, Entry)
                shown = entry_html(entry, palette)
                assert "{&quot;" not in shown
                assert '{"' not in shown
            todo = [e for e in app.entries if e.data.get("name") == "TodoWrite"]
            assert "☐" in entry_html(todo[0], palette)
            assert "☑" in entry_html(todo[0], palette)

    aloop(scenario())


def test_a_fold_clicked_after_scrolling_keeps_its_card_in_place(
        aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude", turns=120)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            view = app.window.transcript
            model = app.controller.transcript
            foldable = [i for i in app.rows("tool")
                        if app.entries[i].data.get("name") in ("Write", "Bash", "Read")
                        and view._expandable(i)]
            assert len(foldable) > 20
            row = foldable[-3]  # past the first batch Qt lays out
            index = model.index(row, 0)
            bar = view.verticalScrollBar()
            # a card read open, then scrolled past its top; and a card folded, its top
            # a little above the view; each clicked while another row is the current one
            for expanded, above in ((True, 160), (False, 30)):
                if app.entries[row].expanded != expanded:
                    model.toggle_expanded(row)
                view.setCurrentIndex(model.index(model.rowCount() - 1, 0))
                view.scrollTo(index, view.ScrollHint.PositionAtTop)
                await until(lambda: view.visualRect(index).isValid(), what="card shown")
                for _ in range(3):
                    await asyncio.sleep(0.02)
                bar.setValue(view.visualRect(index).top() + bar.value() + above)
                top = view.visualRect(index).top()
                assert top == -above
                point = QPoint(view.viewport().width() // 2, 12)
                assert view.indexAt(point).row() == row
                QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                                 Qt.KeyboardModifier.NoModifier, point)
                await until(lambda e=expanded: app.entries[row].expanded != e, what="toggled")
                for _ in range(5):  # the layout and anything queued after it
                    await asyncio.sleep(0.02)
                assert view.visualRect(index).top() == top, expanded
                assert view.indexAt(point).row() == row  # still under the pointer

    aloop(scenario())


def test_ctrl_f_finds_in_the_session_and_highlights_every_match(
        aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude", turns=30)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            w = app.window
            view = w.transcript
            view.setFocus()
            QTest.keyClick(view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
            bar = w.findChild(QWidget, "findBar")
            assert bar is not None
            await until(bar.isVisible, what="the find bar")
            field = bar.findChild(QLineEdit, "findField")
            count = bar.findChild(QLabel, "findCount")
            assert QApplication.focusWidget() is field
            QTest.keyClicks(field, "1 DONE")  # "Step 1 done.", 11 and 21: three answers
            await until(count.text, what="the count")
            assert count.text() == "1 of 3"
            if SHOTS:
                await asyncio.sleep(0.2)
                w.grab().save(str(Path(SHOTS) / "transcript-find.png"))
            marked = {row for row, _s, _l in bar.matches}
            assert marked == set(view.delegate.find_marks)
            assert [app.entries[row].text for row in sorted(marked)] == [
                "Step 1 done.", "Step 11 done.", "Step 21 done."]
            for row in marked:  # painted where the words are
                doc = card_doc(app, row)
                for start, length, _current in view.delegate.find_marks[row]:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(start)
                    cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
                    assert cursor.selectedText() == "1 done"
            # F3 and Shift+F3 step through them, the current one scrolled into view
            QTest.keyClick(field, Qt.Key.Key_F3)
            assert count.text() == "2 of 3"
            row = bar.matches[1][0]
            assert view.viewport().rect().intersects(
                view.visualRect(app.controller.transcript.index(row, 0)))
            assert [m[2] for m in view.delegate.find_marks[row]] == [True]
            QTest.keyClick(field, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
            QTest.keyClick(field, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
            assert count.text() == "3 of 3"
            # the list's filter keeps its own key
            QTest.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
            assert QApplication.focusWidget() is w.filter_box
            # Escape closes the bar and takes the marks away
            field.setFocus()
            QTest.keyClick(field, Qt.Key.Key_Escape)
            assert not bar.isVisible()
            assert view.delegate.find_marks == {}

    aloop(scenario())


def test_export_session_writes_markdown_and_html_and_a_message_copies_as_markdown(
        aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            w = app.window
            for name, chosen in (("notes.md", "Markdown (*.md)"),
                                 ("page", "HTML, one self-contained file (*.html)")):
                export = w.action("actionExportSession")
                assert export.isEnabled(), export.toolTip()
                assert export.shortcut().toString() == "Ctrl+Shift+E"
                w.activateWindow()
                w.transcript.setFocus()
                QTest.keyClick(w.transcript, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier
                               | Qt.KeyboardModifier.ShiftModifier)
                dialog = await until(lambda: next(iter(shown_dialogs()), None),
                                     what="the export dialog")
                await until(dialog.isVisible, what="the dialog shown")
                assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave
                dialog.selectNameFilter(chosen)
                dialog.filterSelected.emit(chosen)
                dialog.setDirectory(str(tmp_path))
                dialog.selectFile(str(tmp_path / name))
                dialog.accept()
                await until(lambda: not shown_dialogs(), what="the dialog gone")
            md = tmp_path / "notes.md"
            page = tmp_path / "page.html"
            await until(lambda: md.exists() and page.exists(), what="both documents")
            await app.idle()
            text = md.read_text()
            assert text.startswith("# /init")
            assert "| step | file |" in text  # the answer's table, as Markdown
            assert "```diff" in text
            assert "+    return run(fast=True)" in text
            html = page.read_text()
            assert html.lstrip().lower().startswith("<!doctype html")
            assert "<table" in html
            assert "https://example.org/docs" in html
            # Copy as Markdown on the answer: its Markdown source
            (answer,) = app.rows("assistant", "| step | file |")
            menu = app.message_menu(answer)
            (copy,) = [a for a in menu.actions() if a.objectName() == "actionCopyMarkdown"]
            menu.close()
            copy.trigger()
            copied = QApplication.clipboard().text()
            assert copied.startswith("### Assistant")
            assert "| step | file |" in copied
            assert "```python\ndef area(r):\n    return 3.14 * r * r\n```" in copied

    aloop(scenario())
