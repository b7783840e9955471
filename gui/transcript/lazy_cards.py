"""Cards laid out as they come into view.

Laying out a card (Markdown, highlighting, a `QTextDocument`) costs ~0.4 ms; a long
session's page has hundreds of them, and a list view asks every row's size before it
paints its first frame. So the view has its delegate guess the height of a card out of
view from its text (`TranscriptDelegate.sizeHint` while `lazy`), lays out for real the
cards of the screen it is about to show (the end, for a transcript followed there), and
measures the guessed ones as they come near (a scroll, a resize, a jump to a row), the
rows laid out again at once and the card at the top of the view kept where it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QTimer
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyleOptionViewItem

if TYPE_CHECKING:
    from forkwise.gui.transcript.transcript_delegate import TranscriptDelegate

    _Base = QListView  # the view these are part of (gui/transcript/transcript_view)
else:
    _Base = object

#: rows measured beyond each edge of the view (a scroll brings them in next)
AHEAD = 2
#: measuring passes per settle (a measured card shrinking brings more guessed ones in)
PASSES = 6
#: guessed rows laid out per idle turn of the loop (~0.4 ms each, and a layout of all)
REST_CHUNK = 16
#: the first of those turns waits this long after the view settled: the screen it
#: shows is painted first
REST_START_MS = 50


class LazyCardsMixin(_Base):
    """The guessed rows of a `TranscriptView` measured as they come into view."""

    if TYPE_CHECKING:
        delegate: TranscriptDelegate
        following: bool

        def _pin(self, index: QPersistentModelIndex, top: int) -> None: ...

    _settling_cards = False
    _settle_queued = False
    _rest_queued = False
    #: lay out the guessed rows while the loop is idle (`measure_rest_soon`)
    rest_in_idle = True

    def measure_end(self) -> None:
        """Lay out for real the rows that fill the view from the last one up (a
        transcript followed at its end shows those first), the rest guessed."""
        model = self.model()
        option = QStyleOptionViewItem()
        option.palette = self.palette()
        room = 2 * max(1, self.viewport().height())
        row = model.rowCount() - 1
        while row >= 0 and room > 0:
            room -= self.delegate.measured_height(model.index(row, 0), option)
            row -= 1

    def _timer(self, name: str, slot: Callable[[], None]) -> QTimer:
        """A single-shot timer of the view's own (it goes with the view: a plain
        `singleShot` called back into a view already deleted)."""
        timer = self.__dict__.get(name)
        if timer is None:
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(slot)
            self.__dict__[name] = timer
        return timer

    def settle_soon(self) -> None:
        """Measure the guessed rows in view on the loop's next turn."""
        if not self._settle_queued:
            self._settle_queued = True
            self._timer("_settle_timer", self._settle_later).start(0)

    def _settle_later(self) -> None:
        self._settle_queued = False
        self.settle_cards()

    def _rows_in_view(self) -> tuple[int, int] | None:
        """The rows in view and `AHEAD` beyond; None before the rows are laid out."""
        model = self.model()
        rows = model.rowCount()
        x = self.viewport().width() // 2
        top = self.indexAt(QPoint(x, 0))
        if not top.isValid():
            return None
        bottom = self.indexAt(QPoint(x, max(0, self.viewport().height() - 1)))
        last = bottom.row() if bottom.isValid() else rows - 1
        return max(0, top.row() - AHEAD), min(rows - 1, last + AHEAD)

    _anchor: tuple[QPersistentModelIndex, int] | None = None
    _going_to: QModelIndex | QPersistentModelIndex | None = None

    def keep_top(self) -> None:
        """Remember the row at the top of the view and where it is: a layout after this
        (cards measured above it, a batch laid out later) leaves it there."""
        top = self.indexAt(QPoint(self.viewport().width() // 2, 0))
        self._anchor = ((QPersistentModelIndex(top), self.visualRect(top).top())
                        if top.isValid() and not self.following else None)

    def updateGeometries(self) -> None:
        super().updateGeometries()
        anchor = self._anchor
        if anchor is not None and not self._settling_cards and not self.following:
            self._settling_cards = True  # the pin's scroll is not the person's
            try:
                self._pin(*anchor)
            finally:
                self._settling_cards = False

    def settle_cards(self, anchor: QModelIndex | QPersistentModelIndex | None = None) -> None:
        """Measure the guessed rows in view (and `AHEAD` beyond it), lay the rows out again
        at once and keep `anchor` (else the top row) where it was (at the end: the end in
        view)."""
        if self._settling_cards or self.model() is None:
            return
        if not self.model().rowCount():
            self._anchor = None
            return
        if anchor is None:
            anchor = self._going_to
        self._settling_cards = True
        try:
            for _ in range(PASSES):
                if not self._measure_in_view(anchor):
                    break
        finally:
            self._settling_cards = False
        self.keep_top()
        self.measure_rest_soon()

    def _measure_in_view(self, anchor_at: QModelIndex | QPersistentModelIndex | None) -> bool:
        model = self.model()
        shown = self._rows_in_view()
        if shown is None:
            return False
        first, last = shown
        if self.following and last < model.rowCount() - 1:
            return False  # laid out part way (in batches): the end is what will show
        changed = [row for row in range(first, last + 1)
                   if self.delegate.measure(model.index(row, 0))]
        if not changed:
            return False
        self._lay_out_again(anchor_at, first)
        return True

    def _lay_out_again(self, anchor_at: QModelIndex | QPersistentModelIndex | None,
                       first: int) -> None:
        """The rows placed again after some were measured, `anchor_at` (else the top row)
        kept where it was (following the end: the end in view)."""
        model = self.model()
        x = self.viewport().width() // 2
        top_index = self.indexAt(QPoint(x, 0))
        if anchor_at is not None and anchor_at.isValid():
            top_index = model.index(anchor_at.row(), 0)
        elif not top_index.isValid():
            top_index = model.index(first, 0)
        anchor = QPersistentModelIndex(top_index)
        top = self.visualRect(top_index).top()
        at_end = self.following
        self.relayout()
        if at_end:
            self.scrollToBottom()
        else:
            self._pin(anchor, top)

    def measure_rest_soon(self, delay: int = REST_START_MS) -> None:
        """While the loop is idle, lay out the guessed rows too, nearest the view first,
        a few per turn: a person who scrolls later finds them laid out (each measuring
        places every row again, which costs more the more rows are loaded)."""
        if self.rest_in_idle and not self._rest_queued and self.delegate.guessed:
            self._rest_queued = True
            self._timer("_rest_timer", self._measure_rest).start(delay)

    def _measure_rest(self) -> None:
        self._rest_queued = False
        if self._settling_cards or self.model() is None:
            return
        shown = self._rows_in_view()
        if shown is None:
            return
        model, rows = self.model(), self.model().rowCount()
        picked: list[int] = []
        up, down = shown[0] - 1, shown[1] + 1
        while len(picked) < REST_CHUNK and (up >= 0 or down < rows):
            for row in (up, down):
                if 0 <= row < rows and self.delegate.measure(model.index(row, 0)):
                    picked.append(row)
            up, down = up - 1, down + 1
        if not picked:
            return
        self._settling_cards = True
        try:
            self._lay_out_again(None, shown[0])
        finally:
            self._settling_cards = False
        self.keep_top()
        self.measure_rest_soon(0)

    def relayout(self) -> None:
        """Every row placed again now, in one pass (in batches, the rows after the first
        batch were placed only later: the scroll range cut short meanwhile)."""
        mode = self.layoutMode()
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        try:
            self.scheduleDelayedItemsLayout()
            self.executeDelayedItemsLayout()
        finally:
            self.setLayoutMode(mode)

    def scrollTo(self, index: QModelIndex | QPersistentModelIndex,
                 hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible
                 ) -> None:
        """A row gone to is laid out for real first (its place is then exact), and placed
        at once when the batches of a layout have not reached it yet (it has no place)."""
        if index.isValid() and (self.delegate.measure(index)
                                or not self.visualRect(index).isValid()):
            self.relayout()
        self._going_to = index  # the settles its scroll starts keep it in place
        try:
            super().scrollTo(index, hint)
        finally:
            self._going_to = None
        self.settle_cards(index)
