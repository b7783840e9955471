"""Paints the transcript's entries as cards and sizes them (sizes are cached per entry state
and width). A row with an index widget (an approval, the fork record) is the widget's; a
row with a foot link (gui/widgets/foot_link) keeps room for it under the card's text.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from forkwise.core.reading.entries import (
    APPROVAL,
    ASSISTANT,
    FORK,
    MODEL,
    STREAM,
    SUMMARY,
    TITLE,
    TOOL,
    TURN_END,
    USER,
    Entry,
)
from forkwise.core.reading.markup import CODE_CSS
from forkwise.gui.models.transcript_model import ENTRY_ROLE
from forkwise.gui.transcript.thumbnails import SCHEME, ThumbDoc, Thumbnails
from forkwise.gui.transcript.transcript_html import DIFF_LINES, dim_colour, entry_html
from forkwise.gui.widgets.foot_link import FootLink

Index = QModelIndex | QPersistentModelIndex

MARGIN_X, MARGIN_Y, PAD = 14, 5, 10
#: a card is never narrower than this; the view asks for room for one (minimumSizeHint)
MIN_CARD = 200
#: a card's text is at most this many of the font's average characters wide: lines of a
#: 1920 px window ran ~190 characters; in a wider view the cards keep a column in its
#: middle, as a chat app's
READING_CHARS = 110
#: space between a card's text and the subagent link at its foot
LINK_GAP = 4
#: the space between a message's paragraphs and around its code blocks
GAP = 6
#: laid-out cards kept for painting (rendering Markdown and code again on every paint
#: would make scrolling stutter)
DOCS_KEPT = 400


class TranscriptDelegate(QStyledItemDelegate):
    """Paints one entry; sizes are cached per entry state and width."""

    def __init__(self, view: QListView) -> None:
        """`view`: the transcript's list view (gui/transcript/transcript_view)."""
        super().__init__(view)
        self.view = view
        #: the words found in the session (gui/transcript/find_bar): per row, (position in
        #: the card's text, length, whether it is the current match)
        self.find_marks: dict[int, list[tuple[int, int, bool]]] = {}
        #: the search hit opened (session, the event's seq, the words it found): the words
        #: are marked in that message's cards while its session is shown
        self.hit: tuple[str, int, list[str]] | None = None
        self._sizes: dict[int, tuple[tuple[Any, ...], QSize]] = {}
        #: rows never laid out get a guessed height (`measure` lays them out when they
        #: come near): set by the view, which measures what it shows itself
        self.lazy = False
        #: ids of the entries whose height is a guess
        self.guessed: set[int] = set()
        #: per kind, the heights of the cards laid out (total, count): for guesses
        self._heights: dict[str, tuple[int, int]] = {}
        self._docs: OrderedDict[int, tuple[tuple[Any, ...], QTextDocument, Entry]] = (
            OrderedDict())
        #: the images' thumbnails, made off the GUI thread; a card shows a placeholder
        #: of the same size until its thumbnail arrives
        self.thumbnails = Thumbnails(self)
        self.thumbnails.ready.connect(self._thumbnail_ready)

    # --- layout -------------------------------------------------------------------

    def _width(self) -> int:
        return max(MIN_CARD, min(self.view.viewport().width() - 2 * MARGIN_X,
                                 self.reading_width()))

    def reading_width(self) -> int:
        """The widest a card is: READING_CHARS of the view's font, and its padding."""
        return self.view.fontMetrics().averageCharWidth() * READING_CHARS + 2 * PAD

    def lane(self, row: QRect) -> QRect:
        """The part of a row an entry is drawn in: the row, or a column of the reading
        width in its middle when the view is wider (cards and index widgets alike)."""
        spare = row.width() - 2 * MARGIN_X - self.reading_width()
        if spare <= 0:
            return QRect(row)
        return row.adjusted(spare // 2, 0, -(spare - spare // 2), 0)

    def card_rect(self, row: QRect) -> QRect:
        """A card's rectangle in its row."""
        return self.lane(row).adjusted(MARGIN_X, MARGIN_Y, -MARGIN_X, -MARGIN_Y)

    def _doc(self, entry: Entry, width: int, palette: QPalette) -> QTextDocument:
        """The card's laid-out text, kept while the entry and palette are; another width
        lays the same document out again (the view's width changes as its scroll bar
        comes and goes: every card was made anew, Markdown and highlighting included)."""
        key = (*self._key(entry, width)[1:], dim_colour(palette))
        kept = self._docs.get(id(entry))
        if kept is not None and kept[0] == key and kept[2] is entry:
            self._docs.move_to_end(id(entry))
            doc = kept[1]
        else:
            doc = self._new_doc(entry, palette)
            # the entry is held with its card: its id is not reused while the card is kept
            self._docs[id(entry)] = (key, doc, entry)
            if len(self._docs) > DOCS_KEPT:
                self._docs.popitem(last=False)
        if doc.textWidth() != width - 2 * PAD:
            doc.setTextWidth(width - 2 * PAD)
        return doc

    def measured_height(self, index: Index, option: QStyleOptionViewItem) -> int:
        """The row's height laid out for real (a guess no more)."""
        entry = index.data(ENTRY_ROLE)
        if isinstance(entry, Entry):
            self.guessed.discard(id(entry))
            self._sizes.pop(id(entry), None)
        lazy, self.lazy = self.lazy, False
        try:
            return self.sizeHint(option, index).height()
        finally:
            self.lazy = lazy

    def _thumbnail_ready(self, key: str) -> None:
        """Cards that showed this image's placeholder are laid out anew (the same size:
        only their paint changes)."""
        stale = [i for i, (_k, doc, _e) in self._docs.items()
                 if isinstance(doc, ThumbDoc) and key in doc.waiting]
        for i in stale:
            del self._docs[i]
        if stale:
            self.view.viewport().update()

    def _new_doc(self, entry: Entry, palette: QPalette) -> QTextDocument:
        doc = ThumbDoc(self.thumbnails)
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.view.font())
        shown = entry_html(entry, palette, self.thumbnails.url)
        # long output lines wrap inside the card (they ran off its right edge); the code
        # colours only where there is code (a style sheet is parsed for each card)
        code = f"\n{CODE_CSS}" if 'class="h' in shown else ""
        # a message's paragraphs and code blocks a little apart (they touched: a code
        # block ran into the sentence before and after it), a tool's output a little
        # below its command (the card's grey hides the output's own); Qt puts a `<pre>`'s
        # margins on its first and last lines only
        doc.setDefaultStyleSheet(
            f"p {{ margin: 0; }} pre {{ margin: 0; white-space: pre-wrap; }}"
            f" .md p {{ margin-top: {GAP}px; }} .md pre {{ margin: {GAP}px 0; }}"
            f" .tool pre {{ margin-top: {GAP // 2}px; }}"
            f" .dim {{ color: {dim_colour(palette)}; }}{code}"
        )
        doc.setHtml(shown)
        return doc

    def _key(self, entry: Entry, width: int) -> tuple[Any, ...]:
        return (width, entry.kind, len(entry.text), entry.expanded,
                entry.has_result, entry.decision, len(entry.images), entry.turn_usage)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            return QSize(100, 24)
        width = self._width()
        widget = self.view.indexWidget(index)
        if widget is not None and not isinstance(widget, FootLink):
            inner = width
            height = widget.heightForWidth(inner) if widget.hasHeightForWidth() else -1
            if height <= 0:
                height = widget.sizeHint().height()
            return QSize(width, height + 2 * MARGIN_Y)
        key = (*self._key(entry, width), widget is not None)
        cached = self._sizes.get(id(entry))
        if cached is not None and cached[0] == key:
            return cached[1]
        if self.lazy and (cached is None or id(entry) in self.guessed):
            # never laid out and not in view: a guess from its text; the view measures
            # it when it comes near (`measure`), so that opening a long session lays out
            # a screen of cards, not all of them
            self.guessed.add(id(entry))
            guess = QSize(width, self._guess(entry, width))
            self._sizes[id(entry)] = (key, guess)
            return guess
        return self._measure(entry, width, widget, option.palette)

    def _guess(self, entry: Entry, width: int) -> int:
        """A card's height from its text's length and lines, its folds shut: rough, and
        never laid out."""
        line = self.view.fontMetrics().lineSpacing()
        per_line = max(1, (width - 2 * PAD) // max(1, self.view.fontMetrics().averageCharWidth()))
        text = entry.text
        lines = sum(1 + len(part) // per_line for part in text[:4000].split("\n"))
        if entry.kind == TOOL and not entry.expanded:
            lines = min(lines + 2, DIFF_LINES)  # its title and command; folded output
        elif entry.kind not in (USER, ASSISTANT, STREAM):
            lines = min(lines, 2)
        guess = max(1, lines) * line + 2 * PAD + 2 * MARGIN_Y
        seen = self._heights.get(entry.kind)
        if seen and entry.kind == TOOL and not entry.expanded:
            # folded tool cards vary less than their text: what those laid out measured
            return (guess + seen[0] // seen[1]) // 2
        return guess

    def is_guessed(self, index: Index) -> bool:
        """The row's height is a guess (it has not been laid out yet)."""
        entry = index.data(ENTRY_ROLE)
        return isinstance(entry, Entry) and id(entry) in self.guessed

    def is_laid_out(self, index: Index) -> bool:
        """The row's card was laid out for real (not guessed, not yet asked for since the
        model was reset)."""
        entry = index.data(ENTRY_ROLE)
        return (isinstance(entry, Entry) and id(entry) in self._sizes
                and id(entry) not in self.guessed)

    def measure(self, index: Index) -> bool:
        """Lay out the card at `index` if its height is a guess: True when it was (its
        size hint changes; the caller lays the rows out again)."""
        if not self.is_guessed(index):
            return False
        option = QStyleOptionViewItem()
        option.palette = self.view.palette()
        self.measured_height(index, option)
        return True

    def _measure(self, entry: Entry, width: int, widget: QWidget | None,
                 palette: QPalette) -> QSize:
        key = (*self._key(entry, width), widget is not None)
        self.guessed.discard(id(entry))
        doc = self._doc(entry, width, palette)
        size = QSize(width, int(doc.size().height()) + 2 * PAD + 2 * MARGIN_Y)
        if entry.kind in (TURN_END, MODEL, TITLE):
            size.setHeight(int(doc.size().height()) + 2 * MARGIN_Y + 4)
        if widget is not None:  # a FootLink: room for it under the text
            size.setHeight(size.height() + widget.sizeHint().height() + LINK_GAP)
        self._sizes[id(entry)] = (key, size)
        total, count = self._heights.get(entry.kind, (0, 0))
        self._heights[entry.kind] = (total + size.height(), count + 1)
        return size

    def forget(self) -> None:
        self._sizes.clear()
        self._docs.clear()
        self.guessed.clear()
        self._heights.clear()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem,
                             index: Index) -> None:
        """A subagent link sits at the foot of its card, inside it; other index widgets
        take the whole row."""
        if not isinstance(editor, FootLink):
            editor.setGeometry(self.lane(option.rect))
            return
        card = self.card_rect(option.rect)
        hint = editor.sizeHint()
        width = min(hint.width(), card.width() - 2 * PAD + 8)
        editor.setGeometry(card.left() + PAD - 4, card.bottom() - PAD - hint.height() + 4,
                           width, hint.height())

    def card_doc(self, index: Index) -> QTextDocument | None:
        """The laid-out text of the card at `index` (None for a row that is a widget)."""
        entry = index.data(ENTRY_ROLE)
        widget = self.view.indexWidget(index)
        if not isinstance(entry, Entry) or not isinstance(widget, FootLink | None):
            return None
        return self._doc(entry, self._width(), self.view.palette())

    def text_top(self, index: Index, position: int) -> int | None:
        """Where the line holding `position` of a card's text is, in viewport pixels."""
        doc = self.card_doc(index)
        entry = index.data(ENTRY_ROLE)
        if doc is None or not isinstance(entry, Entry):
            return None
        block = doc.findBlock(position)
        line = block.layout().lineForTextPosition(position - block.position())
        y = doc.documentLayout().blockBoundingRect(block).top()
        y += line.y() if line.isValid() else 0
        rect = self.card_rect(self.view.visualRect(index))
        return _text_origin(entry, rect).y() + int(y)

    def anchor_at(self, index: Index, point: QPoint) -> str:
        """The link under `point` (viewport coordinates) on the card at `index`, if any."""
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            return ""
        rect = self.card_rect(self.view.visualRect(index))
        doc = self._doc(entry, rect.width(), self.view.palette())
        return doc.documentLayout().anchorAt(QPointF(point - _text_origin(entry, rect)))

    def image_at(self, index: Index, point: QPoint) -> str:
        """The key of the thumbnail under `point` (viewport coordinates) on the card at
        `index`, if any."""
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry) or (not entry.images and entry.kind != TOOL):
            return ""
        rect = self.view.visualRect(index).adjusted(MARGIN_X, MARGIN_Y, -MARGIN_X, -MARGIN_Y)
        doc = self._doc(entry, rect.width(), self.view.palette())
        at = doc.documentLayout().hitTest(QPointF(point - _text_origin(entry, rect)),
                                          Qt.HitTestAccuracy.ExactHit)
        if at < 0:
            return ""
        for position in (at, at + 1):  # the hit may fall before or after the image
            cursor = QTextCursor(doc)
            cursor.setPosition(min(position, doc.characterCount() - 1))
            fmt = cursor.charFormat()
            if fmt.isImageFormat():
                name = fmt.toImageFormat().name()
                scheme, _, key = name.partition(":")
                if scheme == SCHEME and key:
                    return key
        return ""

    def mark_hit(self, session_id: str, seq: int, words: list[str]) -> None:
        self.hit = (session_id, seq, [w for w in words if w])
        self.view.viewport().update()

    def _hit_marks(self, entry: Entry, doc: QTextDocument) -> list[tuple[int, int, bool]]:
        """Where the opened hit's words are in its message's card."""
        hit = self.hit
        model = self.view.model()
        if hit is None or entry.seq != hit[1] or getattr(model, "session_id", None) != hit[0]:
            return []
        marks = []
        for word in hit[2]:
            cursor = doc.find(word)
            while not cursor.isNull():
                start = cursor.selectionStart()
                marks.append((start, cursor.selectionEnd() - start, True))
                cursor = doc.find(word, cursor)
        return marks

    # --- painting -----------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            super().paint(painter, option, index)
            return
        if id(entry) in self.guessed:  # in view before the view measured it
            self.view.settle_soon()  # type: ignore[attr-defined]
        painter.save()
        pal = option.palette
        rect = self.card_rect(option.rect)
        card = entry.kind in (USER, ASSISTANT, TOOL, STREAM, APPROVAL, FORK, SUMMARY)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if card:
            painter.setPen(_border(pal, entry))
            painter.setBrush(_fill(pal, entry))
            painter.drawRoundedRect(rect, 6, 6)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        # the keyboard's place: the current message of a focused transcript shows, also
        # where it is not selected (Tab into the transcript stopped on nothing visible)
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus) and self.view.hasFocus()
        if selected or focused:
            pen = painter.pen()
            pen.setColor(pal.color(QPalette.ColorRole.Highlight))
            pen.setWidth(2)
            if not selected:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect, 6, 6)
        if isinstance(self.view.indexWidget(index), FootLink | None):
            # the card's own width, as sizeHint measured it (the row's width drew the text
            # 18 px past the card's right edge, and left a gap under it)
            doc = self._doc(entry, rect.width(), pal)
            painter.translate(_text_origin(entry, rect))
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette.setColor(QPalette.ColorRole.Text, pal.color(QPalette.ColorRole.Text))
            marks = [*self.find_marks.get(index.row(), ()), *self._hit_marks(entry, doc)]
            if marks:
                ctx.selections = _find_selections(doc, marks)
            doc.documentLayout().draw(painter, ctx)
        painter.restore()


#: a found word, and the current one
FOUND, CURRENT = QColor("#fff2a8"), QColor("#ff9632")


def _find_selections(doc: QTextDocument, marks: list[tuple[int, int, bool]]
                     ) -> list[QAbstractTextDocumentLayout.Selection]:
    selections = []
    for start, length, current in marks:
        cursor = QTextCursor(doc)
        cursor.setPosition(start)
        cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setBackground(CURRENT if current else FOUND)
        fmt.setForeground(QColor("#000000"))
        selection = QAbstractTextDocumentLayout.Selection()
        selection.cursor, selection.format = cursor, fmt
        selections.append(selection)
    return selections


def _text_origin(entry: Entry, rect: QRect) -> QPoint:
    """Where a card's text starts inside its rectangle."""
    top = 2 if entry.kind in (TURN_END, MODEL, TITLE) else PAD
    return QPoint(rect.left() + PAD, rect.top() + top)


def _is_dark(pal: QPalette) -> bool:
    return pal.color(QPalette.ColorRole.Base).lightness() < 128


def _fill(pal: QPalette, entry: Entry) -> QColor:
    base = pal.color(QPalette.ColorRole.Base)
    if entry.kind == USER:
        tint = QColor(pal.color(QPalette.ColorRole.Highlight))
        tint.setAlpha(40 if not _is_dark(pal) else 70)
        return _blend(base, tint)
    if entry.waiting:
        return _blend(base, QColor(230, 160, 40, 50))
    if entry.kind in (TOOL, FORK, SUMMARY):
        return pal.color(QPalette.ColorRole.AlternateBase)
    return base


def _border(pal: QPalette, entry: Entry) -> QColor:
    if entry.kind == FORK:
        return QColor("#2f7fd1")
    if entry.waiting:
        return QColor("#d08a1e")
    return QColor(pal.color(QPalette.ColorRole.Mid))


def _blend(base: QColor, tint: QColor) -> QColor:
    a = tint.alphaF()
    return QColor(
        int(base.red() * (1 - a) + tint.red() * a),
        int(base.green() * (1 - a) + tint.green() * a),
        int(base.blue() * (1 - a) + tint.blue() * a),
    )
