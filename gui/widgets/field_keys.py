"""Keys a person expects in a search field, as in the tools they know (a browser's find
bar, ChatGPT's and VS Code's search): Escape clears what was typed (and, once empty, hands
the keyboard back), Down goes to the results below."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit


class FieldKeys(QObject):
    """Event filter on `field`: Escape clears it, or calls `leave` when it is empty;
    Down (and Page Down) calls `down`."""

    def __init__(self, field: QLineEdit, *, down: Callable[[], None],
                 leave: Callable[[], None]) -> None:
        super().__init__(field)
        self.field = field
        self.down = down
        self.leave = leave
        field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.field or event.type() != QEvent.Type.KeyPress:
            return False
        assert isinstance(event, QKeyEvent)
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if event.key() == Qt.Key.Key_Escape:
            if self.field.text():
                self.field.clear()
            else:
                self.leave()
            return True
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_PageDown):
            self.down()
            return True
        return False
