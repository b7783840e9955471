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
`siblingStep(delta)`, `compareRequested()` (from the fork record, gui/transcript/fork_header),
`sessionRequested(session_id)` (a link to a Task call's subagent or to a fork),
`endRequested()` (Ctrl+End with the session's end not loaded: it is opened there anew).

Its parts: the cards (transcript_delegate, their text transcript_html), the row
widgets (transcript_widgets), following the end and earlier turns (transcript_follow),
the message menu (gui/transcript/message_menu). This class holds the wiring, the keyboard and focus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import QDesktopServices, QFocusEvent, QKeyEvent, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QListView, QMenu, QPushButton, QStyle, QWidget

from forkwise.core.reading.entries import USER
from forkwise.gui.models.transcript_model import TranscriptModel
from forkwise.gui.transcript.fork_header import ForkHeader
from forkwise.gui.transcript.lazy_cards import LazyCardsMixin
from forkwise.gui.transcript.message_menu import MessageMenuMixin
from forkwise.gui.transcript.row_links import RowLinkHooks, RowLinks
from forkwise.gui.transcript.transcript_delegate import (
    MARGIN_X,
    MARGIN_Y,
    MIN_CARD,
    Index,
    TranscriptDelegate,
)
from forkwise.gui.transcript.transcript_follow import FollowMixin
from forkwise.gui.transcript.transcript_html import foldable
from forkwise.gui.transcript.transcript_widgets import RowWidgetsMixin
from forkwise.gui.widgets.foot_link import FootLink
from forkwise.gui.widgets.viewport import adopt_viewport


class TranscriptView(MessageMenuMixin, FollowMixin, RowWidgetsMixin, LazyCardsMixin,
                     QListView):
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

    def add_menu_contributor(self, contributor: Callable[[QMenu, int, bool], None]) -> None:
        """`contributor(menu, row, fork_enabled)` adds to a message's menu right after
        "Fork from here" (Continue in ▸, Open subagent), in the order added."""
        self.menu_extensions.append(contributor)

    def link_rows(self, links: RowLinks) -> None:
        """Take the providers of what rows link to (each hook has one provider) and lay
        the links out again."""
        self.row_links.take(links)
        self.sync_links()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: called as (menu, row, fork_enabled) right after "Fork from here" is added
        self.menu_extensions: list[Callable[[QMenu, int, bool], None]] = []  # (their list)
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
        self.delegate.lazy = True  # cards out of view are guessed (gui/transcript/lazy_cards)
        self.setItemDelegate(self.delegate)
        self.title_of: Callable[[str], str] = lambda sid: sid
        #: what rows link to (a subagent, the forks cut there, a fork's anchor text),
        #: provided through `link_rows`
        self.row_links = RowLinkHooks()
        #: the opened child's place among its siblings, and whether its source changed
        self.fork_position: tuple[int, int] | None = None
        self.source_changed = False
        self._click_at: QPoint | None = None
        self.shared_prefix: str | None = None
        self.clicked.connect(self._clicked)
        #: kept at the end while rows arrive and are laid out (`follow_to_end`, or new rows
        #: while the person reads the end), until they scroll away or another transcript
        #: is shown
        self.following = False
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._scrolled)
        viewport = adopt_viewport(self)  # before the first frame: see gui/widgets/viewport
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

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.settle_soon()
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

    def moveCursor(self, cursorAction: QAbstractItemView.CursorAction,
                   modifiers: Qt.KeyboardModifier) -> QModelIndex:
        """Page Up and Page Down go a viewport's height of messages, also where Qt's own
        step stays on the current one: in a window ~650 px high it did near the end of
        long imported sessions (tall tool cards), and Page Up went no further."""
        index = super().moveCursor(cursorAction, modifiers)
        step = {QAbstractItemView.CursorAction.MovePageUp: -1,
                QAbstractItemView.CursorAction.MovePageDown: 1}.get(cursorAction)
        current = self.currentIndex()
        if step is None or not current.isValid() or index.row() != current.row():
            return index
        model, page = self.model(), self.viewport().height()
        start, row = self.visualRect(current), current.row()
        while 0 <= row + step < model.rowCount():
            rect = self.visualRect(model.index(row + step, 0))
            gone = start.top() - rect.top() if step < 0 else rect.bottom() - start.bottom()
            if gone > page and row != current.row():
                break  # a page away: the next row would be more
            row += step
        return model.index(row, 0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if event.key() == Qt.Key.Key_Home and ctrl and self.transcript().base > 0:
            self.scrollToTop()
            self.show_earlier()
            event.accept()
            return
        if event.key() == Qt.Key.Key_End and ctrl:
            self.go_to_end()
            last = self.model().rowCount() - 1
            if last >= 0 and self.transcript().at_end:
                # the current message goes to the end too: Page Up went back from where
                # it was left, far above
                self.setCurrentIndex(self.model().index(last, 0))
            event.accept()
            return
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and ctrl:
            self.next_prompt(1 if event.key() == Qt.Key.Key_Down else -1)
            event.accept()
            return
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers():
            link = self.indexWidget(self.currentIndex())
            if isinstance(link, FootLink):  # a Task call's subagent, a fork from here
                link.activate()
                event.accept()
                return
            if isinstance(link, ForkHeader) and not link.gone:  # a fork's record: its source
                self.sourceRequested.emit(link.source)
                event.accept()
                return
        # what a click shows (a reasoning, a long tool output) by keyboard too: Enter and
        # Space did nothing there, and Tab goes past the row to its links
        if ((enter or event.key() == Qt.Key.Key_Space) and not event.modifiers()
                and self._expandable(self.currentIndex().row())):
            self.toggle_fold(self.currentIndex().row())
            event.accept()
            return
        super().keyPressEvent(event)

    def next_prompt(self, step: int) -> None:
        """The next (or previous) prompt the person typed becomes the current message, at
        the top of the view: a long session read prompt by prompt, past its tool calls
        (a pager's way; the peers list the prompts in a side bar or a timeline)."""
        model, row = self.transcript(), self.currentIndex().row()
        row += step
        while 0 <= row < model.rowCount():
            entry = model.entry(row)
            if entry is not None and entry.kind == USER:
                index = model.index(row, 0)
                self.following = False
                self.setCurrentIndex(index)
                self.scrollTo(index, QListView.ScrollHint.PositionAtTop)
                return
            row += step

    def keyboardSearch(self, search: str) -> None:
        """Typing a letter does not jump to a card starting with it (a list view's way,
        surprising in a chat)."""

    def _expandable(self, row: int) -> bool:
        """A reasoning, or a tool call with more lines than its folded card shows."""
        entry = self.transcript().entry(row)
        return entry is not None and foldable(entry)

    def _rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        for row in range(max(first - 1, 0), last + 1):  # the row above may lose a fork mark
            self._sync_widget(row)
        model = self.transcript()
        if self.following:
            self.measure_end()  # the rows it will show, before the layout asks
        else:
            self.settle_soon()
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

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._click_at = event.position().toPoint()  # where `clicked` happened
        super().mouseReleaseEvent(event)

    def _clicked(self, index: QModelIndex) -> None:
        """A link opens in the browser, a thumbnail its image at full size; elsewhere a
        click shows or hides a fold."""
        href = self.delegate.anchor_at(index, self._click_at) if self._click_at else ""
        if href:
            QDesktopServices.openUrl(QUrl(href))
            return
        image = self.delegate.image_at(index, self._click_at) if self._click_at else ""
        if image:
            from forkwise.gui.transcript.image_viewer import ImageViewer

            viewer = ImageViewer(self.delegate.thumbnails, image, self)
            viewer.show()
            return
        self.toggle_fold(index.row())

    def show_text_at(self, row: int, position: int) -> None:
        """Scroll so that the line holding `position` of the card at `row` is in view (a
        third of the way down), unless it is in view already."""
        index = self.model().index(row, 0)
        self.following = False
        self.scrollTo(index)
        y = self.delegate.text_top(index, position)
        height = self.viewport().height()
        if y is not None and not 0 <= y < height - 2 * MARGIN_Y - 20:
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + y - height // 3)

    def toggle_fold(self, row: int) -> None:
        """Show or hide a fold, the card staying where it is in the view. Laid out in
        batches (the delegate's size change lays the rows out again, queued), the rows
        after the first batch were placed only later, the scroll bar's range cut short
        meanwhile: the view jumped thousands of pixels away. The rows are laid out in one
        pass until that queued layout has run (their sizes are cached: only this card's
        is new), and the card is put back where it was."""
        self._in_place(row, lambda: self.transcript().toggle_expanded(row))

    def show_reasoning(self, shown: bool) -> None:
        """Every reasoning open (or shut), the card at the top of the view staying there
        (the peers have one switch for it; here each was a click)."""
        top = self.indexAt(QPoint(self.viewport().width() // 2, 1))
        if not top.isValid():
            self.transcript().show_reasoning(shown)
            return
        self._in_place(top.row(), lambda: self.transcript().show_reasoning(shown))

    def _in_place(self, row: int, change: Callable[[], None]) -> None:
        """`change` the rows, the card at `row` staying where it is in the view."""
        index = QPersistentModelIndex(self.model().index(row, 0))
        top = self.visualRect(self.model().index(index.row(), 0)).top()
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        change()
        self.executeDelayedItemsLayout()
        self._pin(index, top)

        def settled() -> None:
            self.executeDelayedItemsLayout()
            self._pin(index, top)
            self.setLayoutMode(QListView.LayoutMode.Batched)
        QTimer.singleShot(0, settled)

    def _pin(self, index: QPersistentModelIndex, top: int) -> None:
        if index.isValid():
            bar, now = self.verticalScrollBar(), self.model().index(index.row(), 0)
            bar.setValue(bar.value() + self.visualRect(now).top() - top)
