"""Menus as data: each entry is placed by menu id, group and order (`Place`), and a menu
is filled from its entries, a separator between groups. The menu bar's menus are filled
again as entries come (features add theirs after the first frame); a context menu is
filled each time it opens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QKeySequence

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu

    from forkwise.gui.shell.bench import MenuId, Place



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
