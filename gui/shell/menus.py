"""Menus as data: each entry is placed by menu id, group and order (`Place`), and a menu
is filled from its entries, a separator between groups. The menu bar's menus are filled
again as entries come (features add theirs after the first frame); a context menu is
filled each time it opens. `ActionsWindow`: the main window's half that makes actions
from their specs and keeps them by id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu

    from forkwise.gui.shell.bench import ActionSpec, MenuId, Place


def keys(standard: QKeySequence.StandardKey, fallback: str) -> list[QKeySequence]:
    """The platform's keys for a standard action, or `fallback` where it defines none."""
    return QKeySequence.keyBindings(standard) or [QKeySequence(fallback)]


Entry = tuple[int, int, "QAction | QMenu"]


class MenuBook:
    """The entries of every menu, and the live menus they fill."""

    def __init__(self) -> None:
        self.entries: dict[MenuId, list[Entry]] = {}
        self.live: dict[MenuId, QMenu] = {}

    def attach(self, menu_id: MenuId, menu: QMenu) -> None:
        """A menu that always shows `menu_id`'s entries (the menu bar's)."""
        self.live[menu_id] = menu
        self.fill(menu, menu_id)

    def place(self, place: Place, item: QAction | QMenu) -> None:
        self.entries.setdefault(place.menu, []).append((place.group, place.order, item))
        self.entries[place.menu].sort(key=lambda e: (e[0], e[1]))
        live = self.live.get(place.menu)
        if live is not None:
            self.fill(live, place.menu)

    def fill(self, menu: QMenu, menu_id: MenuId) -> None:
        """`menu` emptied and filled with `menu_id`'s entries in their order."""
        from PySide6.QtWidgets import QMenu

        menu.clear()
        group: int | None = None
        for entry_group, _order, item in self.entries.get(menu_id, []):
            if group is not None and entry_group != group:
                menu.addSeparator()
            group = entry_group
            if isinstance(item, QMenu):
                menu.addMenu(item)
            else:
                menu.addAction(item)


class ActionsWindow(QMainWindow):
    """Actions made from their specs (`ActionSpec`), kept by id, placed in the menus'
    book; the ones that need a session are enabled with the selection (`session_ready`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.menu_book = MenuBook()
        self.actions_by_id: dict[str, QAction] = {}
        self.session_actions: list[QAction] = []  # enabled while a session is selected

    def session_ready(self) -> bool:
        """Whether a session is selected (and can be acted on)."""
        return False

    def make_action(self, name: str, text: str, shortcut: Any, tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut:
            if isinstance(shortcut, list):
                action.setShortcuts(shortcut)
            else:
                action.setShortcut(shortcut)
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{tip} ({keys})" if keys else tip)
        action.setStatusTip(tip)
        self.addAction(action)
        self.actions_by_id[name] = action
        return action

    def add_action(self, spec: ActionSpec) -> QAction:
        action = self.make_action(spec.id, spec.text, spec.shortcut, spec.tip)
        for place in spec.places:
            self.menu_book.place(place, action)
        if spec.triggered is not None:
            call = spec.triggered
            action.triggered.connect(lambda _checked=False: call())
        if spec.needs_session:
            self.session_actions.append(action)
            action.setEnabled(self.session_ready())
        return action

    def add_menu(self, place: Place, menu: QMenu) -> None:
        self.menu_book.place(place, menu)

    def action(self, action_id: str) -> QAction:
        return self.actions_by_id[action_id]
