"""A one-line label that never widens its pane: a long session title is drawn elided to
the width the window gives it (the full text stays in `text()`, for the tooltip its owner
sets). A plain QLabel asks for its whole text's width as its minimum; in the splitter that
squeezed the session tree to a sliver and pushed the composer's buttons off-screen."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Plain text on one line, elided at `mode` when the label is narrower than it."""

    def __init__(self, parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self.mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().horizontalAdvance("…") * 4),
                     hint.height())

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), self.mode, rect.width())
        align = int(self.alignment() | Qt.AlignmentFlag.AlignVCenter)
        self.style().drawItemText(painter, rect, align, self.palette(), self.isEnabled(), shown,
                                  self.foregroundRole())
