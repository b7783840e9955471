"""The search panel's results: hits grouped by session, a header row per session (its
title once, how many hits, where a Continue in wrote it) and a row per hit (when, who,
the snippet as plain words with the found words in bold)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from forkwise.core.client.rows import SearchHit
from forkwise.gui.domain.search_hits import Group, clean_snippet, grouped
from forkwise.gui.models.session_rows import format_when

Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()
HIT_ROLE = Qt.ItemDataRole.UserRole + 1
#: a header row's Group (None on a hit's row)
GROUP_ROLE = Qt.ItemDataRole.UserRole + 2
OPEN, CLOSE = "«", "»"  # how the host marks the matched words
_WHO = {"user": "You", "assistant": "Assistant", "title": "Title"}


class ShownHit(SearchHit):
    """A hit as the list shows it: its session named as the tree names it, and `where` a
    Continue in wrote it ("" for none)."""

    where: str


class SearchResultsModel(QAbstractListModel):
    """The hits of the latest search as rows: each session's header, then its hits."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hits: list[ShownHit] = []
        self.groups: list[Group] = []
        self._rows: list[tuple[Group, ShownHit | None]] = []

    def set_hits(self, hits: list[ShownHit]) -> None:
        self.beginResetModel()
        self.hits = list(hits)
        self.groups = grouped(self.hits)
        self._rows = []
        for group in self.groups:
            self._rows.append((group, None))
            self._rows.extend((group, hit) for hit in group.hits)  # type: ignore[misc]
        self.endResetModel()

    def hit_row(self, n: int) -> int:
        """The row of the `n`-th hit (headers between)."""
        seen = -1
        for row, (_group, hit) in enumerate(self._rows):
            seen += hit is not None
            if seen == n:
                return row
        return -1

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        group, hit = self._rows[index.row()]
        if role == HIT_ROLE:
            return hit if hit is not None else group.hits[0]  # a header opens the latest
        if role == GROUP_ROLE:
            return group if hit is None else None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            if hit is None:
                return f"{group.title}: {_count(group)}"
            snippet = clean_snippet(hit["snippet"]).replace(OPEN, "").replace(CLOSE, "")
            return f"{format_when(hit['ts'])} · {_WHO.get(hit['kind'], hit['kind'])}: {snippet}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Open {group.title} at {'its latest hit' if hit is None else 'this message'}"
        return None


def _count(group: Group) -> str:
    return f"{len(group.hits)} hit{'s' if len(group.hits) != 1 else ''}"


def group_html(group: Group, palette: QPalette) -> str:
    """A session's header: its title, how many hits, and where a Continue in wrote it."""
    dim = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()
    first: Any = group.hits[0]
    where = f" · {html.escape(first['where'])}" if first.get("where") else ""
    return (f"<p><b>{html.escape(group.title)}</b> "
            f'<span style="color: {dim}">{_count(group)}{where}</span></p>')


def hit_html(hit: ShownHit, palette: QPalette) -> str:
    """A hit as rich text: when and who, then the snippet as plain words with the found
    words in bold (session text is escaped, never interpreted)."""
    dim = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()
    who = _WHO.get(hit["kind"], hit["kind"])
    snippet = html.escape(clean_snippet(hit["snippet"]))
    snippet = snippet.replace(OPEN, "<b>").replace(CLOSE, "</b>")
    return (f'<p><span style="color: {dim}">{format_when(hit["ts"])} · {who}</span> '
            f"{snippet}</p>")


class HitDelegate(QStyledItemDelegate):
    """Paints a session's header, or a hit (indented under it, its snippet on one line
    where it fits)."""

    PAD, INDENT = 5, 14

    def _doc(self, index: Index, width: int, palette: QPalette) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultStyleSheet("p { margin: 0; }")
        group = index.data(GROUP_ROLE)
        hit: ShownHit | None = index.data(HIT_ROLE)
        if group is not None:
            doc.setHtml(group_html(group, palette))
        else:
            doc.setHtml(hit_html(hit, palette) if hit is not None else "")
        doc.setTextWidth(max(80, width - 2 * self.PAD - self._indent(index)))
        return doc

    def _indent(self, index: Index) -> int:
        return 0 if index.data(GROUP_ROLE) is not None else self.INDENT

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        width = option.rect.width() or 300
        doc = self._doc(index, width, option.palette)
        return QSize(width, int(doc.size().height()) + 2 * self.PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        painter.save()
        rect: QRect = option.rect
        palette: QPalette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        header = index.data(GROUP_ROLE) is not None
        if selected:
            painter.fillRect(rect, palette.color(QPalette.ColorRole.Highlight))
        elif header:
            painter.fillRect(rect, palette.color(QPalette.ColorRole.AlternateBase))
        if header and index.row() > 0:
            painter.setPen(palette.color(QPalette.ColorRole.Mid))
            painter.drawLine(rect.topLeft(), rect.topRight())
        doc = self._doc(index, rect.width(), palette)
        painter.translate(rect.left() + self.PAD + self._indent(index), rect.top() + self.PAD)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        ctx.palette.setColor(QPalette.ColorRole.Text, palette.color(role))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()
