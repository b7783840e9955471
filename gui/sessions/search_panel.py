"""Search everything (Ctrl+Shift+F): words over every session's messages, tool calls and
titles, answered by the host's full-text index (`session.search`), shown as a list of
hits (session, time, snippet). Activating a hit opens its session at that message.

The filter box above the tree still filters the tree by title; this panel is the way to
find text in sessions that are not open. It takes the session list's place while it is
open (as a sidebar's Search view does in an editor), so that neither is squeezed beside
the other in a small window; closing it (its ✕, or Escape in an empty box or in the
results) brings the list back.

Signals (SearchPanel): `resultActivated(session_id, seq)`, `closeRequested()`.
"""

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
    QTimer,
    Signal,
)
from PySide6.QtGui import QAbstractTextDocumentLayout, QKeyEvent, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.api import Json
from forkwise.core.client.rows import SearchHit, search_hit
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.models.session_rows import format_when
from forkwise.gui.widgets.field_keys import FieldKeys

Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()
HIT_ROLE = Qt.ItemDataRole.UserRole + 1
class ShownHit(SearchHit):
    """A hit as the list shows it: its session named as the tree names it, and `where` a
    Continue in wrote it ("" for none)."""

    where: str


#: how many hits a search asks for
LIMIT = 100
#: typing pauses this long (ms) before the host is asked
DEBOUNCE_MS = 150
OPEN, CLOSE = "«", "»"  # how the host marks the matched words


class SearchResultsModel(QAbstractListModel):
    """The hits of the latest search, one row each (a reset per answer)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hits: list[ShownHit] = []

    def set_hits(self, hits: list[ShownHit]) -> None:
        self.beginResetModel()
        self.hits = list(hits)
        self.endResetModel()

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.hits)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.hits):
            return None
        hit = self.hits[index.row()]
        if role == HIT_ROLE:
            return hit
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            snippet = hit["snippet"].replace(OPEN, "").replace(CLOSE, "")
            where = f" · {hit['where']}" if hit["where"] else ""
            return f"{hit['title']} · {format_when(hit['ts'])}{where}: {snippet}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Open {hit['title']} at this message"
        return None


def hit_html(hit: ShownHit, palette: QPalette) -> str:
    """A hit as rich text: the session's title and time, then the snippet with the
    matched words in bold (session text is escaped, never interpreted)."""
    dim = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()
    who = {"user": "You", "assistant": "Assistant", "title": "Title"}.get(
        hit["kind"], hit["kind"])
    snippet = html.escape(hit["snippet"])
    snippet = snippet.replace(OPEN, "<b>").replace(CLOSE, "</b>")
    where = f" · {html.escape(hit['where'])}" if hit["where"] else ""
    return (f"<p><b>{html.escape(hit['title'])}</b> "
            f'<span style="color: {dim}">{format_when(hit["ts"])} · {who}{where}</span></p>'
            f'<p style="margin-top: 2px">{snippet}</p>')


class HitDelegate(QStyledItemDelegate):
    """Paints a hit as two short paragraphs (title and time, snippet)."""

    PAD = 6

    def _doc(self, index: Index, width: int, palette: QPalette) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultStyleSheet("p { margin: 0; }")
        hit: ShownHit | None = index.data(HIT_ROLE)
        doc.setHtml(hit_html(hit, palette) if hit is not None else "")
        doc.setTextWidth(max(80, width - 2 * self.PAD))
        return doc

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        width = option.rect.width() or 300
        doc = self._doc(index, width, option.palette)
        return QSize(width, int(doc.size().height()) + 2 * self.PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        painter.save()
        rect: QRect = option.rect
        palette: QPalette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(rect, palette.color(QPalette.ColorRole.Highlight))
        doc = self._doc(index, rect.width(), palette)
        painter.translate(rect.left() + self.PAD, rect.top() + self.PAD)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        ctx.palette.setColor(QPalette.ColorRole.Text, palette.color(role))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()


class ResultsView(QListView):
    """Enter on a hit activates it (as a double click does); Escape leaves the search
    (`escaped`), as its ✕ does: the keyboard is here after Enter opened a hit."""

    escaped = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.activated.emit(self.currentIndex())
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            self.escaped.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class SearchPanel(QWidget):
    resultActivated = Signal(str, int)
    closeRequested = Signal()

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setObjectName("searchPanel")
        self.setAccessibleName("Search all sessions")
        title = QLabel("<b>Search all sessions</b>", self)
        title.setObjectName("searchTitle")
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("searchClose")
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Close the search: back to the sessions (Escape)")
        self.close_button.setAccessibleName("Close the search, back to the sessions")
        self.close_button.clicked.connect(self._leave)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(title, 1)
        head.addWidget(self.close_button)
        self.box = QLineEdit(self)
        self.box.setObjectName("searchBox")
        self.box.setAccessibleName("Search words")
        self.box.setPlaceholderText("Search all sessions: words in messages, tool calls, titles")
        self.box.setClearButtonEnabled(True)
        self.status = QLabel("", self)
        self.status.setObjectName("searchStatus")
        self.status.setAccessibleName("Search status")
        self.model = SearchResultsModel(self)
        self.results = ResultsView(self)
        self.results.setObjectName("searchResults")
        self.results.setAccessibleName("Search results")
        self.results.setAccessibleDescription("Activate a result to open its session there")
        self.results.setModel(self.model)
        self.results.setItemDelegate(HitDelegate(self.results))
        self.results.setWordWrap(True)
        self.results.setUniformItemSizes(False)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.box)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self._asked = ""  # the query whose answer is wanted (older answers are dropped)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run)
        self.box.textChanged.connect(lambda _t: self._timer.start())
        self.box.returnPressed.connect(self._enter)
        self.results.activated.connect(self._activated)
        self.results.doubleClicked.connect(self._activated)
        self.results.escaped.connect(self._leave)
        FieldKeys(self.box, down=self.to_results, leave=self._leave)

    def focus(self) -> None:
        self.box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.box.selectAll()

    def run(self) -> None:
        """Ask the host for the words in the box (now, not after the pause)."""
        self._timer.stop()
        query = self.box.text().strip()
        self._asked = query
        if not query:
            self.model.set_hits([])
            self.status.setText("")
            return
        self.status.setText("Searching…")
        self.controller.ops.run(
            self.controller.client.search(query, LIMIT),
            lambda hits: self._answered(query, hits),
            lambda exc: self._failed(query, exc),
            what="Searching",
        )

    def _answered(self, query: str, hits: list[Json]) -> None:
        if query != self._asked:
            return  # overtaken by what was typed since
        self.model.set_hits([self._named(search_hit(hit)) for hit in hits])
        if not hits:
            self.status.setText(f"Nothing found for “{query}”")
        else:
            more = "+" if len(hits) >= LIMIT else ""
            self.status.setText(f"{len(hits)}{more} found, whole words first, latest first")

    def _named(self, hit: SearchHit) -> ShownHit:
        """The hit with its session named as the list names it: a fork not renamed yet
        after its source ("… — fork 1"), and a session a Continue in wrote says so. Its
        stored title is its source's: their hits read the same as the source's."""
        tree = self.controller.tree
        sid = hit["sessionId"]
        summary = tree.summary(sid)
        if summary is None:
            return ShownHit(**hit, where="")
        where = ""
        if summary["relation"] == "continued":
            from forkwise.gui.widgets.source_badges import continued_text

            where = continued_text(summary["source"])
        shown = ShownHit(**hit, where=where)
        shown["title"] = tree.title_of(sid)
        return shown

    def _failed(self, query: str, exc: BaseException) -> None:
        if query == self._asked:
            self.status.setText("The search failed")
            self.controller.notifier.error(exc, "Searching")

    def _enter(self) -> None:
        """Enter: the words searched for, or the keyboard to their hits. With none, the
        same words are asked again: sessions come in (an agents' folder being brought in
        at the first start) and what found nothing may find something now."""
        unchanged = not self._timer.isActive() and self.box.text().strip() == self._asked
        if unchanged and self.model.rowCount():
            self.to_results()
        else:
            self.run()

    def to_results(self) -> None:
        """The keyboard to the first hit (Enter there opens it)."""
        if self.model.rowCount():
            self.results.setFocus(Qt.FocusReason.OtherFocusReason)
            if not self.results.currentIndex().isValid():
                self.results.setCurrentIndex(self.model.index(0))

    def _leave(self) -> None:
        """Escape in an empty box or in the results, or ✕: the panel closes, back to the
        sessions."""
        self.closeRequested.emit()

    def _activated(self, index: QModelIndex) -> None:
        hit = index.data(HIT_ROLE)
        if isinstance(hit, dict):
            self.resultActivated.emit(str(hit["sessionId"]), int(hit["seq"]))

