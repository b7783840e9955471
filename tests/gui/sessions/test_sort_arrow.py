"""The session tree's sort arrow points the way its rows go: ▼ over the newest-first
rows it opens with, ▲ once a click on the header turns them oldest first (the arrow is
read off the painted header, as a person sees it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QHeaderView

from forkwise.gui.models.session_rows import ACTIVITY, UPDATED_ROLE

pytestmark = pytest.mark.gui


def painted_arrow(header: QHeaderView, section: int) -> str:
    """"up" or "down": the shape of what showing the sort indicator adds to `section`."""
    header.setSortIndicatorShown(False)
    plain = header.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    header.setSortIndicatorShown(True)
    shown = header.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    left = header.sectionViewportPosition(section)
    widths = []  # per pixel row: how many pixels the arrow changed
    for y in range(shown.height()):
        widths.append(sum(1 for x in range(left, left + header.sectionSize(section))
                          if shown.pixel(x, y) != plain.pixel(x, y)))
    rows = [w for w in widths if w]
    assert len(rows) >= 3, f"no arrow painted in section {section}: {widths}"
    assert rows[0] != rows[-1], rows
    return "up" if rows[0] < rows[-1] else "down"


def row_times(model: Any) -> list[str]:
    return [model.index(r, ACTIVITY).data(UPDATED_ROLE) for r in range(model.rowCount())]


def test_the_sort_arrow_points_the_way_the_rows_go(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            header = app.window.tree.header()
            times = row_times(app.controller.proxy)
            assert len(set(times)) == len(times) > 1  # distinct: the order shows
            assert header.sortIndicatorSection() == ACTIVITY
            assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
            assert times == sorted(times, reverse=True)  # newest first
            assert painted_arrow(header, ACTIVITY) == "down"

            middle = QPoint(header.sectionViewportPosition(ACTIVITY) + 10, header.height() // 2)
            QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=middle)
            times = row_times(app.controller.proxy)
            assert header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
            assert times == sorted(times)  # oldest first
            assert painted_arrow(header, ACTIVITY) == "up"

    aloop(scenario())
