"""The session tree's columns: Title takes the free width, the others keep theirs; a
person shows or hides columns from the header's context menu (Model is hidden at first:
it repeats the same text on most rows); widths and visibility are remembered (QSettings).

Folder (the working folder's name; its whole path is in the row's tooltip) shows by itself
when the sessions come from more than one folder (imported sessions of many projects share
one list; in a store of one project it would repeat one name on every row), until the
person shows or hides it from the menu. It is as wide as the widest name among the rows,
up to `FOLDER_MOST`, until the person sets its width by dragging.

In a narrow list (a small window, a narrow pane) Title keeps room to be read: Messages,
then Folder, then Model, step aside while it would be narrower than `TITLE_ROOM`
(Messages and Cost — a session's own cost, also in its tooltip — already below
`MESSAGES_ROOM`: a count matters less than the title, or than the folder of sessions from
several), and come back when there is room. That is not remembered as the person's
choice; a column they turn on themselves stays.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtWidgets import QHeaderView, QTreeView

from forkwise.gui.models.session_rows import (
    ACTIVITY,
    COLUMNS,
    COST,
    FOLDER,
    MESSAGES,
    MODEL,
    RUNNING_TEXT,
    TITLE,
    WAITING_TEXT,
    WHEN_FORMAT,
    WHEN_FORMAT_YEAR,
    folder_name,
)

if TYPE_CHECKING:  # the header's menu: built when first asked for
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QMenu

KEY = "window/treeHeader"
#: set once the person showed or hid Folder from the menu: it no longer follows the rows
FOLDER_CHOSEN = "window/treeFolderChosen"
#: set once the person resized Folder: its width no longer follows the folders' names
FOLDER_SIZED = "window/treeFolderSized"
#: the least widths (Folder's: as wide as its header, the names make it wider)
WIDTHS = {ACTIVITY: 84, MESSAGES: 72, MODEL: 112, FOLDER: 72, COST: 72}
#: Folder's widest fit to the names: a longer name is cut in its middle (at 1280x800 the
#: list is ~480 px wide; Title keeps the rest)
FOLDER_MOST = 160
HIDDEN_AT_FIRST = (MODEL, FOLDER)
#: room for the header's sort arrow beside a column's name
ARROW = 24
#: the Title column's least width before other columns step aside (a 560 px window left
#: it 90 px: "Cl…er" for "Clean up the build folder")
TITLE_ROOM = 170
#: the Title column's least width before Messages steps aside: at 170 px, a 1280x800
#: window's list of sessions from several folders kept Messages beside Folder and left
#: Title 170 px (the list is 500 px wide, whatever the window's width)
MESSAGES_ROOM = 240
#: the columns that step aside for Title, first to last, and the room Title wants of each
GIVE_WAY = ((MESSAGES, MESSAGES_ROOM), (COST, MESSAGES_ROOM), (FOLDER, TITLE_ROOM),
            (MODEL, TITLE_ROOM))
#: the style's focus-frame margin the widths are fitted with before the window's first
#: frame: Qt's common value (QCommonStyle, Fusion, Windows). Asking the style has PySide
#: create its QStyle class and every enum of it (~4 ms of CPU, PySide 6.11), which that
#: frame needs nowhere else; the style's own value is asked right after it (`settle`).
PROVISIONAL_MARGIN = 2


def activity_samples(years: bool = False) -> list[str]:
    """The widest things Last activity shows: a date and time in every month (as
    `format_when` writes them for this year, and with `years` of an earlier one), a
    running session, one that waits for an approval."""
    when = [datetime(2000, month, 28, 23, 59) for month in range(1, 13)]
    shapes = (WHEN_FORMAT, WHEN_FORMAT_YEAR) if years else (WHEN_FORMAT,)
    return [d.strftime(shape) for d in when for shape in shapes] + [RUNNING_TEXT, WAITING_TEXT]


def focus_margin(tree: QTreeView) -> int:
    """The tree's style's horizontal focus-frame margin."""
    from PySide6.QtWidgets import QStyle

    return tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree)


def fitted_width(
    tree: QTreeView, column: int, focus: int | None = None, samples: Iterable[str] = ()
) -> int:
    """`column`'s starting width: its widest usual text (or of `samples`, the texts its
    cells show) in the tree's font (a fixed pixel width cut "03 Dec 21:21" to
    "03 D…1:21"), and never narrower than its header. `focus`: the style's focus-frame
    margin, if known (else it is asked)."""
    margin = 2 * ((focus_margin(tree) if focus is None else focus) + 1)
    texts = list(samples) or (activity_samples() if column == ACTIVITY
                              else ["$9,999.99", "no price"] if column == COST else ["999999"])
    cells = max(tree.fontMetrics().horizontalAdvance(text) for text in texts) + 2 * margin
    name = tree.header().fontMetrics().horizontalAdvance(COLUMNS[column]) + ARROW + margin
    return max(WIDTHS.get(column, 80), cells, name)


class TreeColumns(QObject):
    """Sets up `tree`'s header and keeps its state in `settings` as it changes."""

    def __init__(self, tree: QTreeView, settings: QSettings) -> None:
        super().__init__(tree)
        self.tree = tree
        self.settings = settings
        self.menu: QMenu | None = None
        #: columns hidden for Title's sake (shown again when there is room)
        self.squeezed: set[int] = set()
        #: columns the person turned on here: they do not step aside
        self.kept: set[int] = set()
        #: what Folder shows of the rows' working folders (`name_folders`)
        self.folder_names: set[str] = set()
        #: a row shows an earlier year's date: Last activity has room for the year
        self.years = False
        #: the focus margin the widths are fitted with (the style's once `settle` ran)
        self.focus = PROVISIONAL_MARGIN
        #: widths fitted with the provisional margin, until `settle`
        self._provisional: dict[int, int] = {}
        self._settling = False
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        for column in WIDTHS:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            width = fitted_width(tree, column, self.focus)
            header.resizeSection(column, width)
            self._provisional[column] = width
        for column in HIDDEN_AT_FIRST:
            header.setSectionHidden(column, True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._popup)
        header.sectionResized.connect(self._resized)
        tree.viewport().installEventFilter(self)

    def _resized(self, column: int, old: int, new: int) -> None:
        if self._settling or column == TITLE or column in self.squeezed:
            # Title stretches: its width follows the others' (laid out lazily, when a
            # width is next asked), never the person's choice by itself; a column that
            # stepped aside is reported resized to 0 on each of the header's layouts
            # (thousands while a transcript opens beside it), none the person's doing
            return
        if column == FOLDER and old and new:  # dragged by the person (not shown, hidden)
            self.settings.setValue(FOLDER_SIZED, True)
        self.save()

    def natural(self, column: int) -> int:
        """`column`'s width fitted to what it shows (Folder: the rows' folder names, up to
        `FOLDER_MOST`)."""
        if column == ACTIVITY and self.years:
            return fitted_width(self.tree, column, self.focus, activity_samples(years=True))
        if column != FOLDER:
            return fitted_width(self.tree, column, self.focus)
        fitted = fitted_width(self.tree, FOLDER, self.focus, self.folder_names)
        return max(min(fitted, FOLDER_MOST), WIDTHS[FOLDER])

    def name_folders(self, folders: Iterable[str], *, more: bool = False) -> None:
        """The rows' working folders (`more`: some beside those named before): Folder is
        made as wide as their widest name (`natural`), unless the person set its width."""
        names = {folder_name(folder) for folder in folders}
        if more and names <= self.folder_names:
            return
        self.folder_names = self.folder_names | names if more else names
        if self.settings.value(FOLDER_SIZED) is not None:
            return
        header = self.tree.header()
        self._settling = True  # not the person's choice: nothing saved
        try:
            header.resizeSection(FOLDER, self.natural(FOLDER))  # (kept while it is hidden)
        finally:
            self._settling = False
        self.fit()

    def fit_years(self, updated: Iterable[str]) -> None:
        """Once a row's last activity is of an earlier year (`updated`: the rows' times),
        Last activity widens for the year ("28 Dec 2025 23:59"); until then it keeps the
        room of this year's dates, which Title needs in a narrow list."""
        if self.years:
            return
        year = str(date.today().year)
        if not any(when and when[:4] < year for when in updated):
            return
        self.years = True
        header = self.tree.header()
        need = self.natural(ACTIVITY)
        if header.sectionSize(ACTIVITY) < need:
            self._settling = True  # not the person's choice: nothing saved
            try:
                header.resizeSection(ACTIVITY, need)
            finally:
                self._settling = False
            self.fit()

    def settle(self) -> None:
        """After the first frame: the widths fitted with the style's own focus margin,
        where it differs from the provisional one and the width is still that fit (not
        restored from the settings, nor set by the person)."""
        provisional, self._provisional = self._provisional, {}
        if self.focus != PROVISIONAL_MARGIN:
            return  # settled already
        self.focus = focus_margin(self.tree)
        if self.focus == PROVISIONAL_MARGIN:
            return
        header = self.tree.header()
        self._settling = True  # not the person's choice: nothing saved
        try:
            for column, width in provisional.items():
                if header.sectionSize(column) == width:
                    header.resizeSection(column, self.natural(column))
        finally:
            self._settling = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.tree.viewport():
            self.fit()
        return False

    def fit(self) -> None:
        """Columns step aside (`GIVE_WAY`) while Title would have less than the room it
        wants of each, and come back, in the reverse order, once it has room with them."""
        header = self.tree.header()
        room = self.tree.viewport().width()
        if room <= 0 or not self.tree.isVisible():  # not laid out yet: when shown
            return
        shown = [c for c in WIDTHS if not header.isSectionHidden(c) or c in self.squeezed]
        fixed = {c: header.sectionSize(c) or self.natural(c) for c in shown}
        hide: set[int] = set()
        for column, wanted in GIVE_WAY:
            if room - sum(w for c, w in fixed.items() if c not in hide) >= wanted:
                break
            if column in fixed and column not in self.kept:
                hide.add(column)
        if hide == self.squeezed:
            return
        header.blockSignals(True)  # not the person's choice: nothing saved
        try:
            for column in self.squeezed - hide:
                header.setSectionHidden(column, False)
            for column in hide - self.squeezed:
                header.setSectionHidden(column, True)
        finally:
            header.blockSignals(False)
        self.squeezed = hide
        header.viewport().update()

    def restore(self) -> None:
        state = self.settings.value(KEY)
        if state is not None:
            self.squeezed.clear()
            self._settling = True  # the widths saved, not the person's doing now
            try:
                self.tree.header().restoreState(state)
            finally:
                self._settling = False
        # whatever was saved, Title keeps taking the free width
        self.tree.header().setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionHidden(TITLE, False)
        self.fit()

    def save(self) -> None:
        """The header as the person left it (columns that stepped aside count as shown)."""
        header = self.tree.header()
        if not self.squeezed:
            self.settings.setValue(KEY, header.saveState())
            return
        header.blockSignals(True)
        try:
            for column in self.squeezed:
                header.setSectionHidden(column, False)
            self.settings.setValue(KEY, header.saveState())
            for column in self.squeezed:
                header.setSectionHidden(column, True)
        finally:
            header.blockSignals(False)

    def build_menu(self) -> QMenu:
        """Show/hide each column but Title (built, not shown: tests inspect it)."""
        from PySide6.QtGui import QAction
        from PySide6.QtWidgets import QMenu

        header = self.tree.header()
        menu = QMenu(header)
        menu.setObjectName("columnsMenu")
        for column, name in enumerate(COLUMNS):
            if column == TITLE:
                continue
            action = QAction(name, menu)
            action.setObjectName(f"actionColumn{name.replace(' ', '')}")
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(column) or column in self.squeezed)
            action.setStatusTip(f"Show or hide the {name} column")
            action.toggled.connect(lambda on, c=column: self.set_visible(c, on))
            menu.addAction(action)
        return menu

    def offer_folder(self, several: bool) -> None:
        """Folder shown when the rows come from `several` folders, else hidden; not the
        person's choice (nothing saved), and not done once they made theirs."""
        if self.settings.value(FOLDER_CHOSEN) is not None:
            return
        header = self.tree.header()
        if header.isSectionHidden(FOLDER) != several and FOLDER not in self.squeezed:
            return
        self.squeezed.discard(FOLDER)
        header.blockSignals(True)
        try:
            header.setSectionHidden(FOLDER, not several)
        finally:
            header.blockSignals(False)
        if several and header.sectionSize(FOLDER) < 30:
            header.resizeSection(FOLDER, self.natural(FOLDER))
        header.viewport().update()
        self.fit()

    def set_visible(self, column: int, visible: bool) -> None:
        header = self.tree.header()
        if column == FOLDER:
            self.settings.setValue(FOLDER_CHOSEN, visible)
        self.squeezed.discard(column)
        (self.kept.add if visible else self.kept.discard)(column)
        self._settling = True  # shown or hidden, not resized by the person: saved below
        try:
            header.setSectionHidden(column, not visible)
            if visible and header.sectionSize(column) < 30:
                header.resizeSection(column, self.natural(column))
        finally:
            self._settling = False
        self.save()
        self.fit()

    def _popup(self, pos: QPoint) -> None:
        if self.menu is not None:
            self.menu.deleteLater()
        self.menu = self.build_menu()
        self.menu.popup(self.tree.header().mapToGlobal(pos))
