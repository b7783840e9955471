"""Where the transcript is read: a transcript opened at its end follows it (new output keeps
the view at the bottom while the person reads there; scrolled up, they keep their place and
a "↓ new messages" pill offers the way down), a transcript opened at an event shows that row
in the middle, and one opened at its end offers its earlier turns (a button at the top).

`FollowMixin` is part of `TranscriptView` (transcript_view), which makes the button and
the pill and connects the scroll bar and the model to these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QListView, QPushButton

from forkwise.gui.models.transcript_model import TranscriptModel

if TYPE_CHECKING:
    _Base = QListView  # the view these are part of (gui/transcript/transcript_view)
else:
    _Base = object

#: space above and below the "Show earlier messages" button in its strip
EARLIER_GAP = 4


class FollowMixin(_Base):
    """Following the end, the pill, the earlier-turns button, the target row."""

    if TYPE_CHECKING:  # what the view has
        following: bool
        new_pill: QPushButton
        earlier_button: QPushButton
        endRequested: Signal

        def transcript(self) -> TranscriptModel: ...

        def settle_cards(
            self, anchor: QModelIndex | QPersistentModelIndex | None = None) -> None: ...

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
        self.settle_cards()  # cards scrolled into view are laid out before they are painted
        if self.new_pill.isVisible() and self._at_bottom() and self.transcript().at_end:
            self.new_pill.hide()  # they came down to the new messages
        self._place_earlier_button()
