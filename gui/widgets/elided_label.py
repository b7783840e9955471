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
        #: when the text does not fit: its `head` elided, then the first of `kept` that
        #: leaves room for a few letters of it, drawn whole (a session's title, then its
        #: model and state, or its state alone: eliding the whole line cut them)
        self.head = ""
        self.kept: tuple[str, ...] = ()
        #: when the text does not fit and starts with it: drawn whole, the rest elided (what
        #: a path is, before the path)
        self.lead = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().horizontalAdvance("…") * 4),
                     hint.height())

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def shown_text(self) -> str:
        """The text as drawn at the label's width: elided where it does not fit, with the
        first of `kept` that leaves room for a few letters of the rest drawn whole."""
        metrics, width, text = self.fontMetrics(), self.contentsRect().width(), self.text()
        if metrics.horizontalAdvance(text) <= width:
            return text
        ellipsis = metrics.horizontalAdvance("…")
        if self.lead and text.startswith(self.lead):
            room = width - metrics.horizontalAdvance(self.lead)
            if room >= ellipsis * 6:
                return self.lead + metrics.elidedText(text[len(self.lead) :], self.mode, room)
        if self.head and text.startswith(self.head):
            for kept in self.kept:
                room = width - metrics.horizontalAdvance(kept)
                if room >= ellipsis * 6:
                    return metrics.elidedText(self.head, self.mode, room) + kept
        return metrics.elidedText(text, self.mode, width)

    def paintEvent(self, event: QPaintEvent) -> None:
        shown = self.shown_text()
        if shown == self.text():  # it fits: QLabel draws it (without asking for the
            super().paintEvent(event)  # style in Python: see gui/sessions/tree_columns)
            return
        painter = QPainter(self)
        rect = self.contentsRect()
        align = int(self.alignment() | Qt.AlignmentFlag.AlignVCenter)
        self.style().drawItemText(painter, rect, align, self.palette(), self.isEnabled(), shown,
                                  self.foregroundRole())
