"""The session list's Title cells: a title with no room is cut so that what tells it apart
from the rows above and below stays in view (gui/domain/title_elision), else in the
middle (a fork's "— fork 2" stays at the end)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from forkwise.gui.domain.title_elision import differing_start

Index = QModelIndex | QPersistentModelIndex


class TitleDelegate(QStyledItemDelegate):
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        room = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget).width()
        # the style's own text margins: what it elides within
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        # (a pixel to spare: what fits is not cut again by the style)
        opt.text = self.shown_text(index, opt.text, opt.fontMetrics, room - 2 * margin - 1)
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)

    def shown_text(self, index: Index, text: str, metrics: QFontMetrics, room: int) -> str:
        """`text` as it fits in `room` pixels: whole, from where it parts from a
        neighbouring row's title (after "…"), or cut in the middle."""
        if metrics.horizontalAdvance(text) <= room:
            return text
        model, row, parent = index.model(), index.row(), index.parent()
        neighbours = [str(model.index(row + d, index.column(), parent).data() or "")
                      for d in (-1, 1) if 0 <= row + d < model.rowCount(parent)]
        start = differing_start(text, neighbours)
        if start > 0:
            text = "…" + text[start:]
        return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle
                                  if start == 0 else Qt.TextElideMode.ElideRight, room)
