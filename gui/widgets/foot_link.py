"""A link at the foot of a transcript row to another session: a Task call's subagent
(gui/transcript/subagent_link), the forks that continue from a point
(gui/transcript/fork_marks). A real button (keyboard, assistive tools) set as the row's
index widget; the row's text is still painted above it (`TranscriptDelegate`),
which keeps room for it.

Signals: `opened(session_id)` (the person asked for that session).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QMenu, QPushButton, QWidget


def short_title(title: str, most: int = 60) -> str:
    return title if len(title) <= most else title[:most - 3].rstrip() + "…"


class FootLink(QPushButton):
    opened = Signal(str)

    def __init__(self, session_id: str, text: str, parent: QWidget) -> None:
        super().__init__(text, parent)
        #: all of the text; a card narrower than it shows it elided at the end (it was cut
        #: off at the card's edge, mid-letter, in an 800 px window)
        self.full_text = text
        self.session_id = session_id
        #: sessions to choose from (shown with `popup()`, never `exec()`), if more than one
        self.choices: QMenu | None = None
        self.setObjectName("footLink")
        self.setFlat(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setStyleSheet(
            "QPushButton { color: palette(link); text-align: left; padding: 1px 4px;"
            " border: none; } QPushButton:focus { text-decoration: underline; }")
        self.clicked.connect(self.activate)

    def sizeHint(self) -> QSize:
        """As wide as the whole text, whatever is shown now (the row gives what fits)."""
        hint = super().sizeHint()
        metrics = self.fontMetrics()
        extra = metrics.horizontalAdvance(self.full_text) - metrics.horizontalAdvance(self.text())
        return QSize(hint.width() + extra, hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        metrics = self.fontMetrics()
        padding = super().sizeHint().width() - metrics.horizontalAdvance(self.text())
        shown = self.full_text if self.width() >= self.sizeHint().width() else (
            metrics.elidedText(self.full_text, Qt.TextElideMode.ElideRight,
                               max(0, self.width() - padding)))
        if shown != self.text():
            self.setText(shown)
            self.setToolTip(self.toolTip() or self.full_text)

    def activate(self) -> None:
        """Open the session, or show the ones to choose from (Enter on its row too)."""
        if self.choices is None:
            self.opened.emit(self.session_id)
        else:
            self.choices.popup(self.mapToGlobal(self.rect().bottomLeft()))
