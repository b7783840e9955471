"""The transcript pane: a list view that paints messages as cards.

Pending approvals get real Approve/Deny buttons, the fork record a real link, and a Task
call the subagent it started a link at the foot of its card (index widgets), so all are
reachable by keyboard and assistive tools (Enter on a Task call's row opens its subagent).
The message context menu is built by `build_context_menu` (tests call it) and shown with `popup()`.

A transcript opened at its end follows it: new output keeps the view at the bottom while
the person reads there; scrolled up, they keep their place and a "↓ new messages" pill
offers the way down. Ctrl+End goes to the session's real end (not the loaded page's).

Signals: `forkFromMessage(row)`, `forkBeforeMessage(row)`, `editResend(row)` (edit in a
new branch), `editReplace(row)` (edit in place), `retryRequested(row)`,
`sourceRequested(session_id)`, `approvalDecided(approval_id, approved)`,
`siblingStep(delta)`, `compareRequested()` (from the fork record, gui/fork_header),
`sessionRequested(session_id)` (a link to a Task call's subagent or to a fork),
`endRequested()` (Ctrl+End with the session's end not loaded: it is opened there anew).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import orjson
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFocusEvent,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPalette,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .approval_box import ApprovalBox
from .context_menu import ContextMenuMixin
from .foot_link import FootLink
from .fork_header import ForkHeader
from .fork_marks import ForkMark
from .message_actions import (
    COPY,
    EDIT_REPLACE,
    EDIT_RESEND,
    FORK_BEFORE,
    FORK_FROM,
    RETRY,
    ActionState,
)
from .session_rows import format_when
from .subagent_link import SubagentLink
from .transcript_entries import Entry
from .transcript_model import ENTRY_ROLE, TranscriptModel, plain_text
from .viewport import adopt_viewport

Index = QModelIndex | QPersistentModelIndex

MARGIN_X, MARGIN_Y, PAD = 14, 5, 10
#: a card is never narrower than this; the view asks for room for one (minimumSizeHint)
MIN_CARD = 200
RESULT_LINES = 6
#: space above and below the "Show earlier messages" button in its strip
EARLIER_GAP = 4
#: space between a card's text and the subagent link at its foot
LINK_GAP = 4


class TranscriptDelegate(QStyledItemDelegate):
    """Paints one entry; sizes are cached per entry state and width."""

    def __init__(self, view: TranscriptView) -> None:
        super().__init__(view)
        self.view = view
        self._sizes: dict[int, tuple[tuple[Any, ...], QSize]] = {}

    # --- layout -------------------------------------------------------------------

    def _width(self) -> int:
        return max(MIN_CARD, self.view.viewport().width() - 2 * MARGIN_X)

    def _doc(self, entry: Entry, width: int, palette: QPalette) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.view.font())
        doc.setDefaultStyleSheet(
            # long output lines wrap inside the card (they ran off its right edge)
            f"p {{ margin: 0; }} pre {{ margin: 0; white-space: pre-wrap; }}"
            f" .dim {{ color: {_dim(palette)}; }}"
        )
        doc.setHtml(entry_html(entry, palette))
        doc.setTextWidth(width - 2 * PAD)
        return doc

    def _key(self, entry: Entry, width: int) -> tuple[Any, ...]:
        return (width, entry.kind, len(entry.text), entry.expanded,
                entry.data.get("result") is not None, entry.data.get("decision"))

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
        doc = self._doc(entry, width, option.palette)
        size = QSize(width, int(doc.size().height()) + 2 * PAD + 2 * MARGIN_Y)
        if entry.kind in ("turn", "model", "title"):
            size.setHeight(int(doc.size().height()) + 2 * MARGIN_Y + 4)
        if widget is not None:  # a FootLink: room for it under the text
            size.setHeight(size.height() + widget.sizeHint().height() + LINK_GAP)
        self._sizes[id(entry)] = (key, size)
        return size

    def forget(self) -> None:
        self._sizes.clear()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem,
                             index: Index) -> None:
        """A subagent link sits at the foot of its card, inside it; other index widgets
        take the whole row."""
        if not isinstance(editor, FootLink):
            super().updateEditorGeometry(editor, option, index)
            return
        card: QRect = option.rect.adjusted(MARGIN_X, MARGIN_Y, -MARGIN_X, -MARGIN_Y)
        hint = editor.sizeHint()
        width = min(hint.width(), card.width() - 2 * PAD + 8)
        editor.setGeometry(card.left() + PAD - 4, card.bottom() - PAD - hint.height() + 4,
                           width, hint.height())

    # --- painting -----------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            super().paint(painter, option, index)
            return
        painter.save()
        pal = option.palette
        rect: QRect = option.rect.adjusted(MARGIN_X, MARGIN_Y, -MARGIN_X, -MARGIN_Y)
        card = entry.kind in ("user", "assistant", "tool", "stream", "approval", "fork", "summary")
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if card:
            painter.setPen(_border(pal, entry))
            painter.setBrush(_fill(pal, entry))
            painter.drawRoundedRect(rect, 6, 6)
        if option.state & QStyle.StateFlag.State_Selected:
            pen = painter.pen()
            pen.setColor(pal.color(QPalette.ColorRole.Highlight))
            pen.setWidth(2)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect, 6, 6)
        if isinstance(self.view.indexWidget(index), FootLink | None):
            # the card's own width, as sizeHint measured it (the row's width drew the text
            # 18 px past the card's right edge, and left a gap under it)
            doc = self._doc(entry, rect.width(), pal)
            if entry.kind in ("turn", "model", "title"):
                painter.translate(rect.left() + PAD, rect.top() + 2)
            else:
                painter.translate(rect.left() + PAD, rect.top() + PAD)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette.setColor(QPalette.ColorRole.Text, pal.color(QPalette.ColorRole.Text))
            doc.documentLayout().draw(painter, ctx)
        painter.restore()


def _dim(pal: QPalette) -> str:
    return pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()


def _is_dark(pal: QPalette) -> bool:
    return pal.color(QPalette.ColorRole.Base).lightness() < 128


def _fill(pal: QPalette, entry: Entry) -> QColor:
    base = pal.color(QPalette.ColorRole.Base)
    if entry.kind == "user":
        tint = QColor(pal.color(QPalette.ColorRole.Highlight))
        tint.setAlpha(40 if not _is_dark(pal) else 70)
        return _blend(base, tint)
    if entry.kind == "approval" and entry.data.get("decision") is None:
        return _blend(base, QColor(230, 160, 40, 50))
    if entry.kind in ("tool", "fork", "summary"):
        return pal.color(QPalette.ColorRole.AlternateBase)
    return base


def _border(pal: QPalette, entry: Entry) -> QColor:
    if entry.kind == "fork":
        return QColor("#2f7fd1")
    if entry.kind == "approval" and entry.data.get("decision") is None:
        return QColor("#d08a1e")
    return QColor(pal.color(QPalette.ColorRole.Mid))


def _blend(base: QColor, tint: QColor) -> QColor:
    a = tint.alphaF()
    return QColor(
        int(base.red() * (1 - a) + tint.red() * a),
        int(base.green() * (1 - a) + tint.green() * a),
        int(base.blue() * (1 - a) + tint.blue() * a),
    )


def _text(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


NO_PROVIDER_HINT = ("Session → Use the model from Preferences switches to the model chosen "
                    "there and offers to ask again")


def result_text(result: Any) -> str:
    """A tool's output as a person reads it. Codex keeps a shell call's output as a JSON
    string (`{"output": "...", "metadata": {"exit_code": 1}}`): its text is shown, with
    real line breaks, and a failing exit code."""
    if isinstance(result, str) and result.startswith("{"):
        try:
            value = orjson.loads(result)
        except orjson.JSONDecodeError:
            return result
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            tail = f"\n(exit code {code})" if code not in (None, 0) else ""
            return str(value["output"]) + tail
    return _json(result)


def _json(value: Any) -> str:
    """Compact JSON when it fits on a line, indented when it does not."""
    if isinstance(value, str):
        return value
    try:
        compact = orjson.dumps(value).decode()
        if len(compact) <= 100:
            return compact
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return repr(value)


def entry_html(entry: Entry, pal: QPalette) -> str:
    """The rich text of one entry (escaped: session text is never interpreted as HTML)."""
    kind = entry.kind
    when = format_when(entry.ts)
    origin = ' <span class="dim">· copied from the source</span>' if entry.origin else ""
    if kind in ("user", "assistant", "stream"):
        speaker = {"user": "You", "assistant": "Assistant", "stream": "Assistant"}[kind]
        status = ' <span class="dim">· writing…</span>' if kind == "stream" else ""
        return (f'<p><b>{speaker}</b> <span class="dim">{when}</span>{origin}{status}</p>'
                f'<p style="margin-top: 4px">{_text(entry.text) or "<i>(no text)</i>"}</p>')
    if kind == "reasoning":
        words = len(entry.text.split())
        if not entry.expanded:
            return (f'<p class="dim"><i>▸ Reasoning ({words} words) — click to show</i></p>')
        return (f'<p class="dim"><i>▾ Reasoning — click to hide</i></p>'
                f'<p class="dim" style="margin-top: 4px"><i>{_text(entry.text)}</i></p>')
    if kind == "tool":
        name = html.escape(str(entry.data.get("name")))
        args = _text(_json(entry.data.get("args", {})))
        out = [f'<p><b>⚙ {name}</b> <span class="dim">tool call · {when}</span></p>',
               f'<pre style="margin-top: 4px">{args}</pre>']
        result = entry.data.get("result")
        if result is None:
            out.append('<p class="dim"><i>no result yet</i></p>')
        else:
            text = result_text(result)
            lines = text.splitlines()
            shown = lines if entry.expanded else lines[:RESULT_LINES]
            label = ('<p style="margin-top: 6px; color: #c0392b"><b>error:</b></p>'
                     if entry.data.get("is_error") else
                     '<p class="dim" style="margin-top: 6px">result:</p>')
            out.append(f'{label}'
                       f'<pre style="margin-top: 2px">{_text(chr(10).join(shown))}</pre>')
            if len(lines) > RESULT_LINES:
                more = "click to fold" if entry.expanded else (
                    f"… {len(lines) - RESULT_LINES} more lines — click to show")
                out.append(f'<p class="dim"><i>{more}</i></p>')
        return "".join(out)
    if kind == "approval":
        decision = entry.data.get("decision")
        tool = html.escape(str(entry.data.get("tool")))
        word = {"approved": "✓ Approved", "denied": "✕ Denied", "expired": "Not answered"}.get(
            str(decision), str(decision))
        return f'<p>{word}: <b>{tool}</b> <span class="dim">{when}</span></p>'
    if kind == "turn":
        colour = {"completed": _dim(pal), "cancelled": "#b36b00", "failed": "#c0392b",
                  "interrupted": "#b36b00"}.get(entry.text, _dim(pal))
        line = (f'<p align="center" style="color: {colour}"><small>— turn '
                f'{html.escape(entry.text)} · {when} —</small></p>')
        error = entry.data.get("error")
        if not error:
            return line
        hint = (f"<br>{html.escape(NO_PROVIDER_HINT)}" if "provider" in str(error) else "")
        return (line + f'<p align="center" style="color: {colour}"><small>'
                f"{html.escape(str(error))}{hint}</small></p>")
    if kind == "fork":
        return f"<p>{html.escape(plain_text(entry))}</p>"
    if kind == "model":
        return f'<p align="center" class="dim"><small>Model: {html.escape(entry.text)}</small></p>'
    if kind == "title":
        return f'<p align="center" class="dim"><small>Title: {html.escape(entry.text)}</small></p>'
    if kind == "summary":
        return (f'<p><b>Earlier context summarised</b></p>'
                f'<p class="dim">{_text(entry.text)}</p>')
    return f"<p>{html.escape(plain_text(entry))}</p>"


class TranscriptView(ContextMenuMixin, QListView):
    forkFromMessage = Signal(int)
    forkBeforeMessage = Signal(int)
    editResend = Signal(int)
    editReplace = Signal(int)
    retryRequested = Signal(int)
    sourceRequested = Signal(str)
    approvalDecided = Signal(str, bool)
    siblingStep = Signal(int)
    compareRequested = Signal()
    endRequested = Signal()
    sessionRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: called as (menu, row, fork_enabled) right after "Fork from here" is added
        self.menu_extensions: list[Callable[[QMenu, int, bool], None]] = []
        self.setObjectName("transcript")
        self.setAccessibleName("Transcript")
        self.setAccessibleDescription("Messages of the opened session; right-click one to fork")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformItemSizes(False)
        self.setWordWrap(True)
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(200)
        self.delegate = TranscriptDelegate(self)
        self.setItemDelegate(self.delegate)
        self.title_of: Callable[[str], str] = lambda sid: sid
        #: asks for the text of message `anchor` of session `source` just after event
        #: `boundary` and hands it to the callback (a fork cut before it: gui/branch_actions)
        self.anchor_text: Callable[[str, int, str, Callable[[str], None]], None] | None = None
        #: the subagent session the tool call at a row started, if any (gui/subagent_link)
        self.subagent_of: Callable[[int], str | None] = lambda _row: None
        #: the forks cut right after a row, oldest first (gui/fork_marks)
        self.forks_at: Callable[[int], list[str]] = lambda _row: []
        #: the opened child's place among its siblings, and whether its source changed
        self.fork_position: tuple[int, int] | None = None
        self.source_changed = False
        self.clicked.connect(self._clicked)
        #: kept at the end while rows arrive and are laid out (`follow_to_end`, or new rows
        #: while the person reads the end), until they scroll away or another transcript
        #: is shown
        self.following = False
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._scrolled)
        viewport = adopt_viewport(self)  # before the first frame: see gui/viewport
        # above the top of a transcript opened at its end, while earlier turns are left: in
        # a strip of its own over the viewport (drawn over the viewport, it hid the top of
        # the first card)
        self.earlier_button = QPushButton("Show earlier messages", self)
        self.earlier_button.setObjectName("earlierButton")
        self.earlier_button.setAccessibleName("Show earlier messages")
        self.earlier_button.setToolTip("Load the turns before these (Ctrl+Home at the top)")
        self.earlier_button.clicked.connect(self.show_earlier)
        self.earlier_button.hide()
        # over the bottom while new output arrives below a person who scrolled up
        self.new_pill = QPushButton("↓ New messages", viewport)
        self.new_pill.setObjectName("newMessagesPill")
        self.new_pill.setAccessibleName("New messages below: go to the end")
        self.new_pill.setToolTip("Go to the end of the session (Ctrl+End)")
        self.new_pill.setStyleSheet(
            "QPushButton#newMessagesPill { border-radius: 12px; padding: 4px 14px;"
            " background: palette(highlight); color: palette(highlighted-text); }")
        self.new_pill.clicked.connect(self.go_to_end)
        self.new_pill.hide()

    def minimumSizeHint(self) -> QSize:
        """Room for one card: in a small window (or one restored with a wide session
        list) the splitter takes the width from the list, not from the messages, which
        were cut off behind a horizontal scroll bar, an approval's Deny button with them."""
        hint = super().minimumSizeHint()
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        width = MIN_CARD + 2 * MARGIN_X + bar + 2 * self.frameWidth()
        return QSize(max(hint.width(), width), hint.height())

    def transcript(self) -> TranscriptModel:
        model = self.model()
        assert isinstance(model, TranscriptModel)
        return model

    def setModel(self, model: Any) -> None:
        super().setModel(model)
        model.rowsAboutToBeInserted.connect(self._note_bottom)
        model.rowsInserted.connect(self._rows_inserted)
        model.dataChanged.connect(self._data_changed)
        model.modelReset.connect(self.delegate.forget)
        model.modelReset.connect(self._opened)
        model.modelReset.connect(lambda: self.set_fork_context(None, False))
        model.earlierChanged.connect(lambda _available: self._place_earlier_button())
        model.targetLoaded.connect(self._show_target)

    # --- index widgets: approvals and the fork link ------------------------------

    def _note_bottom(self, *_args: Any) -> None:
        """Remember whether the person is reading the end of the session (then new rows
        keep it in view). The bottom of the pages loaded so far is not the end: the next
        page is added below without moving the view, as the person scrolls on."""
        model, bar = self.transcript(), self.verticalScrollBar()
        reading_end = model.at_end and not model.paging
        if reading_end and bar.value() >= bar.maximum() - 8:  # all in view counts too
            self.following = True

    def follow_to_end(self) -> None:
        """Scroll to the end and stay there while rows (pages, live events) arrive and
        are laid out (in batches, after they arrive: `_range_changed`), until the person
        scrolls away."""
        self.following = True
        model = self.transcript()
        if model.canFetchMore():
            model.fetchMore()  # the next page; `_rows_inserted` asks for the one after
        self.scrollToBottom()

    def stop_following(self) -> None:
        self.following = False

    def _opened(self) -> None:
        """Another session is shown: one opened at its end is followed there."""
        self.following = self.transcript().opened_at_end
        self.new_pill.hide()

    def go_to_end(self) -> None:
        """The session's real end: followed there when it is loaded, else opened there."""
        self.new_pill.hide()
        model = self.transcript()
        if model.at_end or model.opened_at_end:
            self.follow_to_end()
        else:
            self.endRequested.emit()

    def _show_target(self, row: int) -> None:
        """A transcript opened at an event: that row in the middle, selected."""
        self.following = False
        if row < 0:
            return
        index = self.model().index(row, 0)
        self.setCurrentIndex(index)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        # rows above it are laid out in batches: centre it again once they are
        QTimer.singleShot(0, lambda: self._recentre(row))

    def _recentre(self, row: int) -> None:
        if row < self.model().rowCount() and self.currentIndex().row() == row:
            self.scrollTo(self.model().index(row, 0),
                          QAbstractItemView.ScrollHint.PositionAtCenter)

    def _place_pill(self) -> None:
        pill = self.new_pill
        if not pill.isVisible():
            return
        pill.adjustSize()
        x = (self.viewport().width() - pill.width()) // 2
        pill.move(max(0, x), self.viewport().height() - pill.height() - 8)
        pill.raise_()

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 8

    # --- earlier turns (a transcript opened at its end) --------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_earlier_button()
        self._place_pill()

    def focusInEvent(self, event: QFocusEvent) -> None:
        """Reached from the keyboard, the current message is one in view (the last one
        there): the arrow keys and the Menu key start from what the person reads, not
        from the transcript's first row, scrolled away above a session opened at its end."""
        super().focusInEvent(event)
        if event.reason() == Qt.FocusReason.MouseFocusReason:
            return
        viewport = self.viewport().rect()
        current = self.currentIndex()
        if current.isValid() and viewport.intersects(self.visualRect(current)):
            return
        bottom = self.indexAt(QPoint(viewport.center().x(), viewport.bottom() - MARGIN_Y))
        row = bottom.row() if bottom.isValid() else self.model().rowCount() - 1
        if row >= 0:
            scrolls = self.hasAutoScroll()
            self.setAutoScroll(False)  # it is in view: the reading place stays put
            self.setCurrentIndex(self.model().index(row, 0))
            self.setAutoScroll(scrolls)

    def edit(self, index: Index, trigger: QAbstractItemView.EditTrigger,  # type: ignore[override]
             event: QEvent) -> bool:
        """A row with buttons or links does not take the keyboard from the list when it
        becomes current (Qt focuses a row's widget then): the arrow keys keep moving
        through the messages; Tab reaches the buttons, Enter opens a row's link."""
        if trigger == QAbstractItemView.EditTrigger.CurrentChanged:
            return False
        return super().edit(index, trigger, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if event.key() == Qt.Key.Key_Home and ctrl and self.transcript().base > 0:
            self.scrollToTop()
            self.show_earlier()
            event.accept()
            return
        if event.key() == Qt.Key.Key_End and ctrl:
            self.go_to_end()
            event.accept()
            return
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers():
            link = self.indexWidget(self.currentIndex())
            if isinstance(link, FootLink):  # a Task call's subagent, a fork from here
                link.activate()
                event.accept()
                return
        # what a click shows (a reasoning, a long tool output) by keyboard too: Enter and
        # Space did nothing there, and Tab goes past the row to its links
        if ((enter or event.key() == Qt.Key.Key_Space) and not event.modifiers()
                and self._expandable(self.currentIndex().row())):
            self.transcript().toggle_expanded(self.currentIndex().row())
            event.accept()
            return
        super().keyPressEvent(event)

    def _expandable(self, row: int) -> bool:
        """A reasoning, or a tool call whose output is longer than the lines shown."""
        entry = self.transcript().entry(row)
        if entry is None or entry.kind not in ("reasoning", "tool"):
            return False
        if entry.kind == "reasoning":
            return True
        result = entry.data.get("result")
        return result is not None and len(result_text(result).splitlines()) > RESULT_LINES

    def show_earlier(self) -> None:
        model = self.transcript()
        if model.can_fetch_earlier():
            model.fetch_earlier()

    def _place_earlier_button(self) -> None:
        """At the top of a transcript with earlier turns left: the button, in a strip the
        viewport gives up for it (the first card starts below it, not under it)."""
        button, model = self.earlier_button, self.model()
        wanted = (isinstance(model, TranscriptModel) and model.base > 0
                  and self.verticalScrollBar().value() <= 4)
        strip = button.sizeHint().height() + 2 * EARLIER_GAP if wanted else 0
        if self.viewportMargins().top() != strip:
            self.setViewportMargins(0, strip, 0, 0)
        if wanted:
            button.adjustSize()
            frame = self.frameWidth()
            x = frame + (self.viewport().width() - button.width()) // 2
            button.move(max(frame, x), frame + EARLIER_GAP)
            button.raise_()
        button.setVisible(wanted)

    def _keep_on_top(self, row: int) -> None:
        """Rows were added above: the row that was first stays at the top."""
        if row < self.model().rowCount():
            self.scrollTo(self.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop)
        self._place_earlier_button()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self.verticalScrollBar().setValue(maximum)

    def _scrolled(self, value: int) -> None:
        if self.following and value < self.verticalScrollBar().maximum() - 8:
            self.following = False  # the person scrolled up: let them read
        if self.new_pill.isVisible() and self._at_bottom() and self.transcript().at_end:
            self.new_pill.hide()  # they came down to the new messages
        self._place_earlier_button()

    def _rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        for row in range(max(first - 1, 0), last + 1):  # the row above may lose a fork mark
            self._sync_widget(row)
        model = self.transcript()
        if first == 0 and model.paging and last + 1 < model.rowCount():  # an earlier page
            QTimer.singleShot(0, lambda: self._keep_on_top(last + 1))
        elif self.following:
            QTimer.singleShot(0, self.follow_to_end)  # the next page, or the new end
        elif not model.paging and last + 1 == model.rowCount() and not self._at_bottom():
            self.new_pill.show()  # live output below a person reading further up
            self._place_pill()

    def _data_changed(self, top: QModelIndex, bottom: QModelIndex, roles: Any = ()) -> None:
        for row in range(top.row(), bottom.row() + 1):
            self._sync_widget(row)
            self.delegate.sizeHintChanged.emit(self.model().index(row, 0))

    def _sync_widget(self, row: int) -> None:
        index = self.model().index(row, 0)
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            return
        current = self.indexWidget(index)
        forks: list[str] = []
        if entry.kind == "approval" and entry.data.get("decision") is None:
            if current is None:
                self._set_widget(index, self._approval_widget(entry))
        elif entry.kind == "fork":
            if current is None:
                self._set_widget(index, self._fork_widget(entry, row))
        elif entry.kind == "tool" and (child := self.subagent_of(row)) is not None:
            if not isinstance(current, SubagentLink) or current.session_id != child:
                self._set_link(index, SubagentLink(child, self.title_of(child), self.viewport()))
        elif forks := self.forks_at(row):
            if not isinstance(current, ForkMark) or current.forks != forks:
                titles = {sid: self.title_of(sid) for sid in forks}
                self._set_link(index, ForkMark(forks, titles, self.viewport()))
        elif current is not None:
            self.setIndexWidget(index, None)  # type: ignore[arg-type]
            self.delegate.sizeHintChanged.emit(index)

    def _set_link(self, index: QModelIndex, link: FootLink) -> None:
        link.opened.connect(self.sessionRequested)
        self._set_widget(index, link)
        self.delegate.sizeHintChanged.emit(index)

    def _set_widget(self, index: QModelIndex, widget: QWidget) -> None:
        """`widget` on the row at `index`, its buttons and links in the Tab order after
        the messages and the rows above's (made after the window's other widgets, they
        came after the composer's Send and Stop), so Tab goes down the transcript."""
        self.setIndexWidget(index, widget)
        previous: QWidget = self
        for row in range(index.row() - 1, -1, -1):
            above = self.indexWidget(self.model().index(row, 0))
            if above is not None:
                previous = (_tab_parts(above) or [previous])[-1]
                break
        for part in _tab_parts(widget):
            QWidget.setTabOrder(previous, part)
            previous = part

    def sync_links(self) -> None:
        """The links to other sessions again (a subagent or a fork came or went)."""
        for row in range(self.transcript().rowCount()):
            self._sync_widget(row)

    def _approval_widget(self, entry: Entry) -> QWidget:
        box = ApprovalBox(str(entry.data.get("tool")), _json(entry.data.get("args") or {}),
                          str(entry.data.get("approval")), (MARGIN_X + PAD, PAD - 2),
                          self.viewport())
        box.decided.connect(self.approvalDecided)
        return box

    def _fork_widget(self, entry: Entry, row: int) -> QWidget:
        source = str(entry.data.get("source"))
        point = fork_point(entry, self._message_text, self._message_above(row))
        header = ForkHeader(source, self.title_of(source), point,
                            self.viewport(), margins=(MARGIN_X + PAD, PAD - 2),
                            subagent=entry.data.get("relation") == "subagent",
                            continued=entry.data.get("relation") == "continued")
        anchor, boundary = entry.data.get("anchorMessage"), entry.data.get("boundary")
        if (entry.data.get("includeMessage") is False and anchor and not header.gone
                and isinstance(boundary, int) and self.anchor_text is not None
                and not self._message_text(str(anchor))):
            def landed(text: str) -> None:
                if text and self.fork_header() is header:  # still the one shown
                    header.set_point(fork_point(entry, lambda _m: text))
                    index = self.indexAt(header.geometry().center())
                    if index.isValid():
                        self.delegate.sizeHintChanged.emit(index)
            self.anchor_text(source, boundary, str(anchor), landed)
        header.sourceRequested.connect(self.sourceRequested)
        header.stepRequested.connect(self.siblingStep)
        header.compareRequested.connect(self.compareRequested)
        if row == self._own_fork_row():
            header.set_position(self.fork_position)
            header.set_changed(self.source_changed)
        return header

    def _own_fork_row(self) -> int:
        """The row of the opened child's own fork record: the last one. A fork of a fork
        also holds the records its source copied (where that source was cut from its own
        source); those showed the child's sibling arrows and source warning too."""
        model = self.transcript()
        for row in range(model.rowCount() - 1, -1, -1):
            entry = model.entry(row)
            if entry is not None and entry.kind == "fork":
                return row
        return -1

    def fork_header(self) -> ForkHeader | None:
        """The opened child's own fork record widget, if it is loaded."""
        row = self._own_fork_row()
        widget = self.indexWidget(self.model().index(row, 0)) if row >= 0 else None
        return widget if isinstance(widget, ForkHeader) else None

    def set_fork_context(self, position: tuple[int, int] | None, changed: bool) -> None:
        """Where the opened child stands among its siblings, and whether its source changed
        since the fork (shown in its fork record, now and when it is loaded)."""
        self.fork_position, self.source_changed = position, changed
        header = self.fork_header()
        if header is not None:
            header.set_position(position)
            header.set_changed(changed)
            index = self.indexAt(header.geometry().center())
            if index.isValid():
                self.delegate.sizeHintChanged.emit(index)

    def _message_above(self, row: int) -> str | None:
        """The words of the last message above `row` (loaded), if any."""
        model = self.transcript()
        for above in range(row - 1, -1, -1):
            entry = model.entry(above)
            if entry is not None and entry.kind in ("user", "assistant") and entry.text.strip():
                return entry.text
        return None

    def _message_text(self, message_id: str) -> str | None:
        model = self.transcript()
        row = model.row_of_message(message_id)
        entry = model.entry(row) if row >= 0 else None
        return entry.text if entry is not None else None

    def _clicked(self, index: QModelIndex) -> None:
        self.transcript().toggle_expanded(index.row())

    # --- the context menu ------------------------------------------------------------

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        """The menu for the entry at `index` (built, not shown)."""
        model = self.transcript()
        row = index.row() if index.isValid() else -1
        states = model.actions_for(row)
        menu = QMenu(self)
        menu.setObjectName("messageMenu")
        menu.setToolTipsVisible(True)
        handlers: dict[str, Callable[[], None]] = {
            FORK_FROM: lambda: self.forkFromMessage.emit(row),
            FORK_BEFORE: lambda: self.forkBeforeMessage.emit(row),
            EDIT_RESEND: lambda: self.editResend.emit(row),
            RETRY: lambda: self.retryRequested.emit(row),
            EDIT_REPLACE: lambda: self.editReplace.emit(row),
            COPY: lambda: self._copy(row),
        }
        for state in states:
            if state.name in (EDIT_RESEND, EDIT_REPLACE, COPY):
                menu.addSeparator()
            menu.addAction(_action(menu, state, handlers[state.name]))
            if state.name == FORK_FROM:
                for extend in self.menu_extensions:  # e.g. Continue in ▸ (gui/agents)
                    extend(menu, row, state.enabled)
        return menu

    def _copy(self, row: int) -> None:
        entry = self.transcript().entry(row)
        if entry is not None:
            QGuiApplication.clipboard().setText(plain_text(entry))

    def menu_position(self, row: int) -> QPoint:
        """Where a context menu for `row` would be asked for (tests send events there)."""
        rect = self.visualRect(self.model().index(row, 0))
        return rect.center()


def _tab_parts(widget: QWidget) -> list[QWidget]:
    """`widget` and its children that Tab stops at, in order."""
    return [part for part in [widget, *widget.findChildren(QWidget)]
            if part.focusPolicy() & Qt.FocusPolicy.TabFocus]


def _action(menu: QMenu, state: ActionState, handler: Callable[[], None]) -> Any:
    from PySide6.QtGui import QAction

    action = QAction(state.label, menu)  # short: the reason is the tooltip and status tip
    action.setObjectName(state.name)
    action.setEnabled(state.enabled)
    action.setToolTip(state.reason or state.label)
    action.setStatusTip(state.reason)
    if state.name == COPY:
        action.setShortcut("Ctrl+C")
    action.triggered.connect(handler)
    return action


def fork_point(entry: Entry, text_of: Callable[[str], str | None] = lambda _m: None,
               above: str | None = None) -> str:
    """Where a fork was cut, in words: the anchor message's first words where known, and
    "before" them for a fork cut before its message (Fork before, Edit and resend: the
    message is not in the child; its words come from the source, `anchor_text`). A fork
    with no anchor (an imported Claude Code rewind, Codex fork, pi branch) is named by the
    last message copied above it, `above`: "event 7" told a person nothing."""
    anchor = entry.data.get("anchorMessage")
    boundary = entry.data.get("boundary")
    before = entry.data.get("includeMessage") is False

    def words(text: str) -> str:
        text = text.strip().replace("\n", " ")
        return text if len(text) <= 60 else text[:57].rstrip() + "…"

    if anchor:
        text = (text_of(str(anchor)) or "").strip()
        if text:
            return f"{'before ' if before else ''}“{words(text)}” (event {boundary})"
        # not the message's id: no one reads "user:we-want-to:546d"
        return f"{'before ' if before else ''}a message (event {boundary})"
    if boundary and above and above.strip():
        return f"“{words(above)}” (event {boundary})"
    return f"event {boundary}" if boundary else "the beginning"
