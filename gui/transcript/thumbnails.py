"""Thumbnails of a session's images, decoded and scaled off the GUI thread.

A card names each image `forkwise-image:<digest>` (never its data URI: Qt would decode
it at full size on the GUI thread while laying the card out). A card's document asks for
the image while it is laid out (`ThumbDoc.loadResource`): a thumbnail made before is
given at once; otherwise a placeholder of the same size, and the image is decoded and
scaled on a worker thread. `ready(key)` says a thumbnail arrived: the delegate lays out
anew the cards that showed its placeholder. A thumbnail's size is known before it is
decoded (`header_size`: the image's own size, from the first bytes of a PNG, GIF or
JPEG, scaled into `BOX`; BOX itself when unknown) and the placeholder has that size, so
a card keeps its height when its image arrives.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
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
#: images known by their digest, so a card laid out again can ask for one: at most this
#: many, holding at most KNOWN_BYTES of base64 (the images of sessions shown before stay
#: alive while they are known)
KNOWN = 2000
KNOWN_BYTES = 64 * 1024 * 1024


class Thumbnails(QObject):
    """The thumbnails made so far (bounded) and the decoding in flight."""

    ready = Signal(str)
    #: an image decoded at full size (`full`): a null image when it could not be
    fullReady = Signal(str, QImage)
    _decoded = Signal(str, QImage)  # from a worker thread, queued to this object's thread

    def __init__(self, parent: QObject | None = None, pool: Executor | None = None) -> None:
        super().__init__(parent)
        #: where images are decoded (one worker: a long session's images queue up there)
        self.pool: Executor = pool or ThreadPoolExecutor(1, thread_name_prefix="thumbnails")
        #: the threads images were decoded on (what a test checks: never the GUI's)
        self.decoded_on: set[int] = set()
        self._kept: OrderedDict[str, QImage] = OrderedDict()
        self._known: OrderedDict[str, Image] = OrderedDict()
        self._known_bytes = 0
        self._keys: OrderedDict[int, tuple[Image, str]] = OrderedDict()  # id → (image, key)
        self._pending: set[str] = set()
        self._sizes: OrderedDict[str, QSize] = OrderedDict()  # key → the thumbnail's size
        self._placeholders: dict[tuple[int, int, str], QImage] = {}
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
        before = self._known.pop(key, None)
        self._known_bytes += len(image.b64) - (len(before.b64) if before is not None else 0)
        self._known[key] = image
        while len(self._known) > 1 and (len(self._known) > KNOWN
                                        or self._known_bytes > KNOWN_BYTES):
            _key, gone = self._known.popitem(last=False)
            self._known_bytes -= len(gone.b64)
        _bound(self._keys, len(self._known))
        self._sizes[key] = fitted(header_size(image.b64), BOX)
        _bound(self._sizes, KNOWN)
        return key

    def size_of(self, key: str) -> QSize:
        return self._sizes.get(key, BOX)

    def placeholder(self, key: str, words: str = "image…") -> QImage:
        size = self.size_of(key)
        made = self._placeholders.get((size.width(), size.height(), words))
        if made is None:
            made = _placeholder(size, words)
            self._placeholders[(size.width(), size.height(), words)] = made
        return made

    def get(self, key: str) -> QImage | None:
        """The thumbnail of `key` if it is made; else None, and it is asked for."""
        made = self._kept.get(key)
        if made is not None:
            self._kept.move_to_end(key)
            return made
        image = self._known.get(key)
        if image is not None and key not in self._pending:
            self._pending.add(key)
            self.pool.submit(self._decode, key, image, self.size_of(key))
        return None

    def full(self, key: str) -> bool:
        """Decode the image of `key` at full size on the worker (`fullReady`); False when
        the image is not known."""
        image = self._known.get(key)
        if image is None:
            return False
        self.pool.submit(self._decode_full, key, image)
        return True

    def _decode_full(self, key: str, image: Image) -> None:
        self.decoded_on.add(threading.get_ident())
        try:
            made = QImage.fromData(image.data())
        except Exception:
            made = QImage()
        self.fullReady.emit(key, made)

    def _decode(self, key: str, image: Image, box: QSize) -> None:
        self.decoded_on.add(threading.get_ident())
        try:
            made = thumbnail(image.data(), box)
        except Exception:
            made = QImage()
        self._decoded.emit(key, made)  # a null image: it could not be decoded

    def _arrived(self, key: str, made: QImage) -> None:
        self._pending.discard(key)
        self._kept[key] = made if not made.isNull() else self.placeholder(key, "broken image")
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


def _placeholder(size: QSize, words: str) -> QImage:
    out = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(QColor("#eaeef2"))
    painter = QPainter(out)
    painter.setPen(QColor("#8c959f"))
    painter.drawRect(0, 0, size.width() - 1, size.height() - 1)
    if size.width() >= 60 and size.height() >= 20:
        painter.drawText(out.rect(), Qt.AlignmentFlag.AlignCenter, words)
    painter.end()
    return out


def fitted(size: tuple[int, int] | None, box: QSize) -> QSize:
    """A thumbnail's size: `size` scaled into `box` (never up), `box` when unknown."""
    if size is None:
        return QSize(box)
    natural = QSize(max(1, size[0]), max(1, size[1]))
    if natural.width() <= box.width() and natural.height() <= box.height():
        return natural
    return natural.scaled(box, Qt.AspectRatioMode.KeepAspectRatio).expandedTo(QSize(1, 1))


def header_size(b64: str) -> tuple[int, int] | None:
    """An image's width and height from its first bytes (PNG, GIF; JPEG from its frame
    header within the first 64 KB), without decoding it; None when not found."""
    try:
        head = base64.b64decode(b64[:87_384], validate=False)  # 64 KB
    except (binascii.Error, ValueError):
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    if head[:2] == b"\xff\xd8":
        at = 2
        while at + 9 < len(head):
            if head[at] != 0xFF:
                return None
            marker = head[at + 1]
            length = int.from_bytes(head[at + 2:at + 4], "big")
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD,
                          0xCE, 0xCF):
                height, width = struct.unpack(">HH", head[at + 5:at + 9])
                return int(width), int(height)
            at += 2 + length
    return None


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
            return self.thumbnails.placeholder(key)
        return made
