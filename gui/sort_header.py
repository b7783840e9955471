"""The session tree's header, whose sort arrow points the way its rows go.

QHeaderView hands styles `SortDown` for an ascending sort and `SortUp` for a descending
one. Styles that draw that arrow as it is named (Fusion, the default on Linux, and the
classic "windows" style) therefore put ▲ over rows sorted newest first, which nearly
everyone reads as "ascending" (oldest first). This header gives those styles ▲ for
ascending and ▼ for descending. Native styles that map the value to the platform's own
indicator themselves (windowsvista, windows11, macos) get Qt's value unchanged.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QWidget

if TYPE_CHECKING:  # imported once the header paints: not before the window's first frame
    from PySide6.QtWidgets import QStyleOptionHeader

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
