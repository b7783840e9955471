"""The session tree's columns: Title takes the free width, the others keep theirs; a
person shows or hides columns from the header's context menu (Model is hidden at first:
it repeats the same text on most rows); widths and visibility are remembered (QSettings).
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHeaderView, QMenu, QStyle, QTreeView

from .session_rows import ACTIVITY, COLUMNS, MESSAGES, MODEL, TITLE

KEY = "window/treeHeader"
WIDTHS = {ACTIVITY: 84, MESSAGES: 72, MODEL: 112}
HIDDEN_AT_FIRST = (MODEL,)
#: room for the header's sort arrow beside a column's name
ARROW = 24


def activity_samples() -> list[str]:
    """The widest things Last activity shows: a date and time in every month (as
    `format_when` writes them for this year), an older date, a running session."""
    when = [datetime(2000, month, 28, 23, 59) for month in range(1, 13)]
    return [d.strftime("%d %b %H:%M") for d in when] + ["2000-12-28", "● running"]


def fitted_width(tree: QTreeView, column: int) -> int:
    """`column`'s starting width: its widest usual text in the tree's font (a fixed pixel
    width cut "03 Dec 21:21" to "03 D…1:21"), and never narrower than its header."""
    style = tree.style()
    margin = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree) + 1)
    samples = activity_samples() if column == ACTIVITY else ["999999"]
    cells = max(tree.fontMetrics().horizontalAdvance(text) for text in samples) + 2 * margin
    name = tree.header().fontMetrics().horizontalAdvance(COLUMNS[column]) + ARROW + margin
    return max(WIDTHS.get(column, 80), cells, name)


class TreeColumns:
    """Sets up `tree`'s header and keeps its state in `settings` as it changes."""

    def __init__(self, tree: QTreeView, settings: QSettings) -> None:
        self.tree = tree
        self.settings = settings
        self.menu: QMenu | None = None
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        for column in WIDTHS:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, fitted_width(tree, column))
        for column in HIDDEN_AT_FIRST:
            header.setSectionHidden(column, True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._popup)
        header.sectionResized.connect(lambda *_a: self.save())

    def restore(self) -> None:
        state = self.settings.value(KEY)
        if state is not None:
            self.tree.header().restoreState(state)
        # whatever was saved, Title keeps taking the free width
        self.tree.header().setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionHidden(TITLE, False)

    def save(self) -> None:
        self.settings.setValue(KEY, self.tree.header().saveState())

    def build_menu(self) -> QMenu:
        """Show/hide each column but Title (built, not shown: tests inspect it)."""
        header = self.tree.header()
        menu = QMenu(header)
        menu.setObjectName("columnsMenu")
        for column, name in enumerate(COLUMNS):
            if column == TITLE:
                continue
            action = QAction(name, menu)
            action.setObjectName(f"actionColumn{name.replace(' ', '')}")
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(column))
            action.setStatusTip(f"Show or hide the {name} column")
            action.toggled.connect(lambda on, c=column: self.set_visible(c, on))
            menu.addAction(action)
        return menu

    def set_visible(self, column: int, visible: bool) -> None:
        header = self.tree.header()
        header.setSectionHidden(column, not visible)
        if visible and header.sectionSize(column) < 30:
            header.resizeSection(column, fitted_width(self.tree, column))
        self.save()

    def _popup(self, pos: QPoint) -> None:
        if self.menu is not None:
            self.menu.deleteLater()
        self.menu = self.build_menu()
        self.menu.popup(self.tree.header().mapToGlobal(pos))
