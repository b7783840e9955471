"""A link at the foot of a transcript row to another session: a Task call's subagent
(gui/subagent_link), the forks that continue from a point (gui/fork_marks). A real button
(keyboard, assistive tools) set as the row's index widget; the row's text is still
painted above it (`TranscriptDelegate`), which keeps room for it.

Signals: `opened(session_id)` (the person asked for that session).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QMenu, QPushButton, QWidget


def short_title(title: str, most: int = 60) -> str:
    return title if len(title) <= most else title[:most - 3].rstrip() + "…"


class FootLink(QPushButton):
    opened = Signal(str)

    def __init__(self, session_id: str, text: str, parent: QWidget) -> None:
        super().__init__(text, parent)
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

    def activate(self) -> None:
        """Open the session, or show the ones to choose from (Enter on its row too)."""
        if self.choices is None:
            self.opened.emit(self.session_id)
        else:
            self.choices.popup(self.mapToGlobal(self.rect().bottomLeft()))
