"""Context menus on item views: built by the view's `build_context_menu(index)` (which tests
call directly and inspect), shown with `popup()` — never `exec()`, which would block."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QContextMenuEvent, QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QMenu

if TYPE_CHECKING:
    _Base = QAbstractItemView  # the view this is part of
else:
    _Base = object


class ContextMenuMixin(_Base):
    """For a QAbstractItemView subclass that defines `build_context_menu(index) -> QMenu`.

    The row under the pointer becomes current, the menu pops up there, and the menu shown
    before is released (it has closed by then). From the keyboard, the menu is the current
    row's. `last_menu` is the one showing."""

    last_menu: QMenu | None = None

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        raise NotImplementedError

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Shift+F10 opens the current row's menu, as the Menu key does: Qt makes a menu
        of the Menu key only, except on Windows (X11 and Wayland keyboards without that
        key had no way to a message's Fork from here)."""
        shift_f10 = (event.key() == Qt.Key.Key_F10
                     and event.modifiers() == Qt.KeyboardModifier.ShiftModifier)
        if shift_f10 and sys.platform != "win32":
            point = self.viewport().rect().center()
            self.contextMenuEvent(QContextMenuEvent(
                QContextMenuEvent.Reason.Keyboard, point, self.viewport().mapToGlobal(point)))
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        assert isinstance(self, QAbstractItemView)
        where = event.globalPos()
        if event.reason() == QContextMenuEvent.Reason.Keyboard:
            # the Menu key or Shift+F10: the current row's menu, shown on that row (Qt's
            # point is in the view's frame, not its viewport, and may be scrolled away)
            index = self.currentIndex()
            if index.isValid():
                self.scrollTo(index)
                where = self.viewport().mapToGlobal(self.visualRect(index).center())
        else:
            index = self.indexAt(event.pos())
            if index.isValid():
                self.setCurrentIndex(index)
        menu = self.build_context_menu(index)
        if self.last_menu is not None:
            self.last_menu.deleteLater()
        self.last_menu = menu
        menu.popup(where)
        event.accept()
