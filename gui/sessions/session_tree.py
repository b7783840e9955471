"""The session tree's view: the lineage tree with its loading placeholder and its rows'
context menu, and its header, whose sort arrow points the way its rows go.

QHeaderView hands styles `SortDown` for an ascending sort and `SortUp` for a descending
one. Styles that draw that arrow as it is named (Fusion, the default on Linux, and the
classic "windows" style) therefore put ▲ over rows sorted newest first, which nearly
everyone reads as "ascending" (oldest first). `SortHeader` gives those styles ▲ for
ascending and ▼ for descending. Native styles that map the value to the platform's own
indicator themselves (windowsvista, windows11, macos) get Qt's value unchanged.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTreeView, QWidget

from forkwise.gui.models.session_rows import ID_ROLE, TITLE
from forkwise.gui.sessions.title_delegate import TitleDelegate
from forkwise.gui.widgets.context_menu import ContextMenuMixin
from forkwise.gui.widgets.viewport import adopt_viewport

if TYPE_CHECKING:  # imported once used: not before the window's first frame
    from collections.abc import Callable

    from PySide6.QtWidgets import QMenu, QStyleOptionHeader

    from forkwise.gui.kernel.controller import Controller

#: styles that translate Qt's sort indicator into the platform's own
NATIVE_STYLES = frozenset({"windowsvista", "windows11", "macos"})


class SortHeader(QHeaderView):
    """A horizontal header whose sort arrow points up for ascending, down for descending."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setObjectName("sessionTreeHeader")
        # what QTreeView gives its own header
        self.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setStretchLastSection(True)

    def arrow(self) -> QStyleOptionHeader.SortIndicator:
        """The arrow this header asks the style to draw (None when it shows no sort)."""
        from PySide6.QtWidgets import QStyleOptionHeader

        _Sort = QStyleOptionHeader.SortIndicator
        if not self.isSortIndicatorShown() or self.sortIndicatorSection() < 0:
            return _Sort.None_
        ascending = self.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
        # (those styles exist on Windows and macOS only; elsewhere the style is not asked:
        # its PySide class and enums cost ~4 ms on the way to the first frame)
        if sys.platform in ("win32", "darwin") and self.style().name().lower() in NATIVE_STYLES:
            return _Sort.SortDown if ascending else _Sort.SortUp  # Qt's own value
        return _Sort.SortUp if ascending else _Sort.SortDown

    def initStyleOptionForIndex(self, option: QStyleOptionHeader, logicalIndex: int) -> None:
        super().initStyleOptionForIndex(option, logicalIndex)
        if option.sortIndicator != type(option).SortIndicator.None_:
            option.sortIndicator = self.arrow()


class SessionTree(ContextMenuMixin, QTreeView):
    """The lineage tree; its row context menu is built by `build_context_menu`."""

    def __init__(self, parent: QWidget, controller: Controller) -> None:
        super().__init__(parent)
        self.controller = controller
        #: fills a row's context menu (the window's entries for it, placed as data)
        self.fill_menu: Callable[[QMenu], None] = lambda _menu: None
        #: Enter on a row: the keyboard goes to its messages (the window's transcript)
        self.enter_rows: Callable[[], None] = lambda: None
        self.setHeader(SortHeader(self))  # its arrow points the way the rows go
        self.setObjectName("sessionTree")
        self.setAccessibleName("Sessions")
        self.setAccessibleDescription("Sessions grouped by lineage: forks and subagents "
                                      "beneath the session they came from")
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        # forks differ at the end of their titles ("… — fork 2"): keep both ends in view;
        # titles that share a long start are shown from where they part from their
        # neighbours' (the Title cells' delegate)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setItemDelegateForColumn(TITLE, TitleDelegate(self))
        # two rows (Ctrl+click) can be compared; the current row is the one opened
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSortingEnabled(True)
        self.setAnimated(False)
        self.setExpandsOnDoubleClick(True)
        # The scroll bar is there from the loading state on: appearing with the rows, it
        # would narrow the viewport and so the stretched Title column under the cursor.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        # shown while the store opens (the window's first frame comes before the store)
        # (the viewport as gui/widgets/viewport wraps it: cheaper before the first frame)
        self.placeholder = QLabel("Loading sessions…", adopt_viewport(self))
        self.placeholder.setObjectName("treePlaceholder")
        self.placeholder.setAccessibleName("Loading sessions")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setEnabled(False)  # drawn in the palette's placeholder grey

        self.rest_pending = False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.placeholder.setGeometry(self.viewport().rect())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.rest_pending and self.model().rowCount():
            # The model hands over its first page of rows at load (they paint at once);
            # the rest follows right after that frame, so that the scroll bar, End and
            # Page Down cover the whole store (laying out 10,000 rows takes ~0.1 s).
            self.rest_pending = False
            QTimer.singleShot(0, self.controller.tree.fetch_all)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter on a session goes into it: the keyboard to its messages (the one in
        view), where the arrows read and the Menu key forks; Tab goes on to the composer.
        It did nothing (a row is opened when it becomes current)."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        plain = event.modifiers() in (Qt.KeyboardModifier.NoModifier,
                                      Qt.KeyboardModifier.KeypadModifier)
        if enter and plain and self.currentIndex().isValid():
            self.enter_rows()
            event.accept()
            return
        super().keyPressEvent(event)

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        from PySide6.QtWidgets import QMenu

        menu = QMenu(self)
        menu.setObjectName("sessionMenu")
        menu.setToolTipsVisible(True)
        self.fill_menu(menu)
        menu.addSeparator()
        copy = menu.addAction("Copy session id")
        copy.setObjectName("actionCopySessionId")
        sid = index.data(ID_ROLE) if index.isValid() else None
        copy.setEnabled(bool(sid))
        copy.triggered.connect(lambda: copy_text(str(sid)))
        return menu


def copy_text(text: str) -> None:
    from PySide6.QtGui import QGuiApplication

    QGuiApplication.clipboard().setText(text)
