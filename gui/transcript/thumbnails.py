"""Thumbnails of a session's images, decoded and scaled off the GUI thread.

A card names each image `forkwise-image:<digest>` (never its data URI: Qt would decode
it at full size on the GUI thread while laying the card out). A card's document asks for
the image while it is laid out (`ThumbDoc.loadResource`): a thumbnail made before is
given at once; otherwise a placeholder of the same size, and the image is decoded and
scaled on a worker thread. `ready(key)` says a thumbnail arrived: the delegate lays out
anew the cards that showed its placeholder. Every thumbnail fills one box (`BOX`, the
image scaled into it), so a card keeps its height when its image arrives.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QTextDocument

from forkwise.core.reading.images import Image

SCHEME = "forkwise-image"
#: the box a thumbnail is scaled into (and the placeholder's size)
BOX = QSize(240, 160)
#: thumbnails kept (each at most BOX: 150 KB)
KEPT = 200
#: images known by their digest, so a card laid out again can ask for one
KNOWN = 2000


class Thumbnails(QObject):
    """The thumbnails made so far (bounded) and the decoding in flight."""

    ready = Signal(str)
    _decoded = Signal(str, QImage)  # from a worker thread, queued to this object's thread

    def __init__(self, parent: QObject | None = None, pool: Executor | None = None) -> None:
        super().__init__(parent)
        #: where images are decoded (one worker: a long session's images queue up there)
        self.pool: Executor = pool or ThreadPoolExecutor(1, thread_name_prefix="thumbnails")
        #: the threads images were decoded on (what a test checks: never the GUI's)
        self.decoded_on: set[int] = set()
        self._kept: OrderedDict[str, QImage] = OrderedDict()
        self._known: OrderedDict[str, Image] = OrderedDict()
        self._keys: OrderedDict[int, tuple[Image, str]] = OrderedDict()  # id → (image, key)
        self._pending: set[str] = set()
        self.placeholder = _placeholder()
        self._decoded.connect(self._arrived)

    def url(self, image: Image) -> str:
        """The name a card's HTML gives `image`."""
        return f"{SCHEME}:{self.key(image)}"

    def key(self, image: Image) -> str:
        kept = self._keys.get(id(image))
        if kept is not None and kept[0] is image:
            return kept[1]
        key = hashlib.blake2b(image.b64.encode("ascii", "replace"), digest_size=16).hexdigest()
        self._keys[id(image)] = (image, key)  # the image is held: its id is not reused
        _bound(self._keys, KNOWN)
        self._known[key] = image
        _bound(self._known, KNOWN)
        return key

    def get(self, key: str) -> QImage | None:
        """The thumbnail of `key` if it is made; else None, and it is asked for."""
        made = self._kept.get(key)
        if made is not None:
            self._kept.move_to_end(key)
            return made
        image = self._known.get(key)
        if image is not None and key not in self._pending:
            self._pending.add(key)
            self.pool.submit(self._decode, key, image)
        return None

    def _decode(self, key: str, image: Image) -> None:
        self.decoded_on.add(threading.get_ident())
        try:
            made = thumbnail(image.data(), BOX)
        except Exception:
            made = QImage()
        self._decoded.emit(key, made)  # a null image: it could not be decoded

    def _arrived(self, key: str, made: QImage) -> None:
        self._pending.discard(key)
        self._kept[key] = made if not made.isNull() else _placeholder("broken image")
        _bound(self._kept, KEPT)
        self.ready.emit(key)


def thumbnail(data: bytes, box: QSize) -> QImage:
    """`data` decoded at most `box` big (a reader scales while it decodes where the format
    allows), drawn into a `box`-sized transparent image."""
    array = QByteArray(data)
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    size = reader.size()
    if size.isValid() and (size.width() > box.width() or size.height() > box.height()):
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    decoded = reader.read()
    buffer.close()
    if decoded.isNull():
        return decoded
    if decoded.width() > box.width() or decoded.height() > box.height():
        decoded = decoded.scaled(box, Qt.AspectRatioMode.KeepAspectRatio,
                                 Qt.TransformationMode.SmoothTransformation)
    out = QImage(box, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    painter.drawImage(0, (box.height() - decoded.height()) // 2, decoded)
    painter.end()
    return out


def _placeholder(words: str = "image…") -> QImage:
    out = QImage(BOX, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(QColor("#eaeef2"))
    painter = QPainter(out)
    painter.setPen(QColor("#8c959f"))
    painter.drawRect(0, 0, BOX.width() - 1, BOX.height() - 1)
    painter.drawText(out.rect(), Qt.AlignmentFlag.AlignCenter, words)
    painter.end()
    return out


def _bound(kept: OrderedDict[Any, Any], most: int) -> None:
    while len(kept) > most:
        kept.popitem(last=False)


class ThumbDoc(QTextDocument):
    """A card's document: its images come from the thumbnails; `waiting` holds the keys
    it showed a placeholder for."""

    def __init__(self, thumbnails: Thumbnails) -> None:
        super().__init__()
        self.thumbnails = thumbnails
        self.waiting: set[str] = set()

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        url = QUrl(name) if isinstance(name, str) else name
        if url.scheme() != SCHEME:
            return super().loadResource(type, name)
        key = url.path()
        made = self.thumbnails.get(key)
        if made is None:
            self.waiting.add(key)
            return self.thumbnails.placeholder
        return made
