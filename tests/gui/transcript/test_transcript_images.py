"""Images in the transcript: a prompt's pasted image shows in its card (a real-format
Claude Code file), as a thumbnail decoded and scaled on a worker thread; until it is made
the card paints a placeholder of the same size, and the GUI thread never decodes it."""

from __future__ import annotations

import base64
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import App, open_app, until
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from reading_scene import SHOTS, card_doc, opened, write_session

from forkwise.gui.transcript.thumbnails import BOX, fitted, header_size

pytestmark = pytest.mark.gui
SID = "5d1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5f"


def red_png(width: int, height: int, fmt: str = "PNG") -> str:
    """A web page's screenshot with a red header, as base64 PNG (or `fmt`)."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    painter.fillRect(0, 0, width, height * 3 // 10, QColor("#e01010"))
    for n in range(6):  # lines of text
        top = height * 4 // 10 + n * height // 10
        painter.fillRect(width // 12, top, width * (10 - n % 3) // 14, max(1, height // 30),
                         QColor("#8c959f"))
    painter.end()
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, fmt)
    buffer.close()
    return base64.b64encode(bytes(array.data())).decode()


def screenshot_session(root: Path, png: str) -> Path:
    t = cf.Transcript(SID)
    t.user("Set up the project")
    t.assistant([{"type": "text", "text": "Done."}])
    t.user([{"type": "text", "text": "Why does the page look like this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": png}}])
    t.assistant([{"type": "text", "text": "The header is **red**."}])
    path = t.write(cf.project_file(root, t))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root


async def open_prompt(app: App, root: Path) -> int:
    """Import the screenshot session, open it and scroll to its prompt with the image:
    that prompt's row."""
    report = await app.client.import_files([str(root)])
    assert not report["failed"], report
    sid = f"claude-{SID}"
    await until(lambda: sid in app.controller.tree.session_ids(), what="imported")
    await app.idle()
    await app.open(sid)
    (row,) = app.rows("user", "Why does the page look like this?")
    app.window.transcript.scrollTo(app.controller.transcript.index(row))
    return row


def reds_in_card(app: App, row: int) -> int:
    view = app.window.transcript
    rect = view.visualRect(app.controller.transcript.index(row))
    shot = view.viewport().grab().toImage()
    return sum(1 for y in range(max(0, rect.top()), min(rect.bottom(), shot.height()), 3)
               for x in range(max(0, rect.left()), min(rect.right(), shot.width()), 3)
               if _red(shot.pixelColor(x, y)))


def _red(colour: QColor) -> bool:
    return colour.red() > 180 and colour.green() < 80 and colour.blue() < 80


def test_a_pasted_image_shows_in_its_prompt(aloop: Any, tmp_path: Path) -> None:
    root = write_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await opened(app, root)
            (row,) = app.rows("user", "What is in this screenshot?")
            doc = card_doc(app, row)
            html = doc.toHtml()
            assert "forkwise-image:" in html
            assert "data:image" not in html  # Qt is never handed the image to decode
            (key,) = [k for k in html.split('"') if k.startswith("forkwise-image:")]
            thumbnails = app.window.transcript.delegate.thumbnails
            await until(lambda: thumbnails.get(key.partition(":")[2]) is not None,
                        what="thumbnail made")
            # the picture at its own size (an image smaller than the box is not blown up)
            made = thumbnails.get(key.partition(":")[2])
            assert made is not None
            assert made.size() == QSize(180, 100)

    aloop(scenario())


def test_a_large_image_is_decoded_off_the_gui_thread_behind_a_placeholder(
    aloop: Any, tmp_path: Path
) -> None:
    root = screenshot_session(tmp_path / "claude", red_png(3000, 2000))
    gate = threading.Event()
    pool = ThreadPoolExecutor(1, thread_name_prefix="test-thumbnails")
    pool.submit(gate.wait, 30)  # the worker is busy until the test lets it go

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            view = app.window.transcript
            thumbnails = view.delegate.thumbnails
            thumbnails.pool = pool
            row = await open_prompt(app, root)
            index = app.controller.transcript.index(row)
            await until(lambda: view.visualRect(index).isValid(), what="prompt shown")
            # the card is painted now, its image a placeholder: nothing red in it
            assert reds_in_card(app, row) == 0
            placeholder = QColor("#eaeef2")
            shot = view.viewport().grab().toImage()
            rect = view.visualRect(index)
            assert any(shot.pixelColor(x, y) == placeholder
                       for y in range(rect.top(), rect.bottom(), 4)
                       for x in range(rect.left(), rect.right(), 4)), "no placeholder"
            assert not thumbnails.decoded_on
            height = rect.height()
            gate.set()
            await until(lambda: reds_in_card(app, row) > 100, what="thumbnail painted")
            assert thumbnails.decoded_on
            assert threading.main_thread().ident not in thumbnails.decoded_on
            assert view.visualRect(index).height() == height  # the card kept its size
            if SHOTS:
                app.window.grab().save(str(Path(SHOTS) / "transcript-image.png"))

    try:
        aloop(scenario())
    finally:
        gate.set()
        pool.shutdown(wait=True)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_a_thumbnails_size_is_known_before_it_is_decoded(qapp: Any, fmt: str) -> None:
    for width, height in ((3000, 2000), (200, 1000), (90, 40)):
        data = red_png(width, height, fmt)
        assert header_size(data) == (width, height)
    assert fitted((3000, 2000), BOX) == BOX  # 3:2, as the box
    assert fitted((200, 1000), BOX) == QSize(32, 160)
    assert fitted((90, 40), BOX) == QSize(90, 40)  # never blown up
    assert fitted(None, BOX) == BOX
    assert header_size("bm90IGFuIGltYWdl") is None


def test_a_click_on_a_thumbnail_opens_the_image_at_full_size(
        aloop: Any, tmp_path: Path) -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    root = screenshot_session(tmp_path / "claude", red_png(1200, 800))

    def viewers() -> list[Any]:
        return [w for w in QApplication.topLevelWidgets()
                if w.objectName() == "imageViewer" and w.isVisible()]

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            view = app.window.transcript
            row = await open_prompt(app, root)
            index = app.controller.transcript.index(row)
            await until(lambda: reds_in_card(app, row) > 100, what="thumbnail painted")
            rect = view.visualRect(index)
            shot = view.viewport().grab().toImage()
            (red,) = [QPoint(x, y) for y in range(rect.top() + 20, rect.bottom(), 5)
                      for x in range(rect.left(), rect.right(), 5)
                      if _red(shot.pixelColor(x, y))][:1]
            # the words beside it open nothing
            QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                             Qt.KeyboardModifier.NoModifier, rect.topLeft() + QPoint(40, 30))
            await app.idle()
            assert not viewers()
            QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                             Qt.KeyboardModifier.NoModifier, red)
            await until(viewers, what="the viewer")
            (viewer,) = viewers()
            await until(lambda: not viewer.label.pixmap().isNull(), what="the full image")
            assert viewer.label.pixmap().size() == QSize(1200, 800)
            assert viewer.windowTitle() == "Image — 1200 x 800"
            viewer.close()

    aloop(scenario())


def test_the_images_known_are_bounded_in_bytes(qapp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Images of sessions shown before stay alive while known: at most KNOWN_BYTES."""
    from forkwise.core.reading.images import Image
    from forkwise.gui.transcript import thumbnails as t

    monkeypatch.setattr(t, "KNOWN_BYTES", 10_000)
    made = t.Thumbnails()
    images = [Image("image/png", red_png(40 + n, 30)) for n in range(40)]
    keys = [made.key(image) for image in images]
    again = Image("image/png", images[-1].b64)  # the same picture, another event's
    assert made.key(again) == keys[-1]  # known again: counted once
    assert sum(len(i.b64) for i in made._known.values()) == made._known_bytes <= 10_000
    assert keys[-1] in made._known
    assert keys[0] not in made._known  # the oldest went first
    made.deleteLater()
