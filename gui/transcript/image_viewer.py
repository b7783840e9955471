"""An image of a session at full size, in a window of its own (a click on a thumbnail in
the transcript opens it). The image is decoded on the thumbnails' worker thread; the
window says "Loading…" until it is."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from forkwise.gui.transcript.thumbnails import Thumbnails


class ImageViewer(QWidget):
    """One image at full size, scrollable; Escape closes it."""

    def __init__(self, thumbnails: Thumbnails, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("imageViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle("Image")
        self.setAccessibleName("Image at full size")
        self.key = key
        self.label = QLabel("Loading…", self)
        self.label.setObjectName("imageViewerImage")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        area = QScrollArea(self)
        area.setWidget(self.label)
        area.setWidgetResizable(True)
        area.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(area)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close)
        self.resize(900, 680)
        thumbnails.fullReady.connect(self._arrived)
        thumbnails.full(key)

    def _arrived(self, key: str, image: QImage) -> None:
        if key != self.key:
            return
        if image.isNull():
            self.label.setText("This image could not be read")
            return
        self.label.setPixmap(QPixmap.fromImage(image))
        self.setWindowTitle(f"Image — {image.width()} x {image.height()}")
