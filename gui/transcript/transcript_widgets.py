"""The widgets on transcript rows: an approval's Approve/Deny buttons (approval_box), the
fork record (gui/transcript/fork_header), and the links at a card's foot to a Task call's subagent
(subagent_link) or to the forks cut there (fork_marks). Real widgets, so all are
reachable by keyboard and assistive tools; they join the Tab order down the transcript.

`RowWidgetsMixin` is part of `TranscriptView` (gui/transcript/transcript_view), which keeps them in
step with its model's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QListView, QWidget

from forkwise.core.reading.entries import ASSISTANT, FORK, TOOL, USER, Entry
from forkwise.gui.models.transcript_model import ENTRY_ROLE, TranscriptModel
from forkwise.gui.transcript.approval_box import ApprovalBox
from forkwise.gui.transcript.fork_header import ForkHeader, fork_point
from forkwise.gui.transcript.fork_marks import ForkMark
from forkwise.gui.transcript.row_links import RowLinkHooks
from forkwise.gui.transcript.subagent_link import SubagentLink
from forkwise.gui.transcript.transcript_delegate import MARGIN_X, PAD, TranscriptDelegate
from forkwise.gui.transcript.transcript_html import json_text
from forkwise.gui.widgets.foot_link import FootLink

if TYPE_CHECKING:
    _Base = QListView  # the view these are part of (gui/transcript/transcript_view)
else:
    _Base = object


class RowWidgetsMixin(_Base):
    """Index widgets made, kept and dropped as rows come and change."""

    if TYPE_CHECKING:  # what the view has
        delegate: TranscriptDelegate
        title_of: Callable[[str], str]
        row_links: RowLinkHooks
        fork_position: tuple[int, int] | None
        source_changed: bool
        shared_prefix: str | None
        sessionRequested: Signal
        approvalDecided: Signal
        sourceRequested: Signal
        siblingStep: Signal
        compareRequested: Signal

        def transcript(self) -> TranscriptModel: ...

    def _sync_widget(self, row: int) -> None:
        index = self.model().index(row, 0)
        entry = index.data(ENTRY_ROLE)
        if not isinstance(entry, Entry):
            return
        current = self.indexWidget(index)
        forks: list[str] = []
        if entry.waiting:
            if current is None:
                self._set_widget(index, self._approval_widget(entry))
        elif entry.kind == FORK:
            if current is None:
                self._set_widget(index, self._fork_widget(entry, row))
        elif entry.kind == TOOL and (child := self._subagent_at(row)) is not None:
            if not isinstance(current, SubagentLink) or current.session_id != child:
                self._set_link(index, SubagentLink(child, self.title_of(child), self.viewport()))
        elif forks := self._forks_at(row):
            if not isinstance(current, ForkMark) or current.forks != forks:
                titles = {sid: self.title_of(sid) for sid in forks}
                self._set_link(index, ForkMark(forks, titles, self.viewport()))
        elif current is not None:
            self.setIndexWidget(index, None)  # type: ignore[arg-type]
            self.delegate.sizeHintChanged.emit(index)

    def _subagent_at(self, row: int) -> str | None:
        provider = self.row_links.subagent_of
        return provider(row) if provider is not None else None

    def _forks_at(self, row: int) -> list[str]:
        provider = self.row_links.forks_at
        return provider(row) if provider is not None else []

    def _set_link(self, index: QModelIndex, link: FootLink) -> None:
        link.opened.connect(self.sessionRequested)
        self._set_widget(index, link)
        self.delegate.sizeHintChanged.emit(index)

    def _set_widget(self, index: QModelIndex, widget: QWidget) -> None:
        """`widget` on the row at `index`. Its links (a fork record's, a foot link) are
        not Tab stops: Tab goes from the messages to the composer in one step (it went
        through two links that showed no focus), and Enter on the row opens its link
        (`keyPressEvent`); the fork record's arrows are Alt+Left and Alt+Right. An
        approval's buttons are: in the Tab order after the messages and the rows above's
        (made after the window's other widgets, they came after the composer's Send and
        Stop), so Tab reaches them before the composer."""
        self.setIndexWidget(index, widget)
        if not isinstance(widget, ApprovalBox):
            for part in _tab_parts(widget):
                if isinstance(part, QLabel):  # links: by mouse (and Enter on the row)
                    part.setTextInteractionFlags(
                        part.textInteractionFlags()
                        & ~Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
                part.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
            return
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
        box = ApprovalBox(entry.approval_tool, json_text(entry.args or {}),
                          entry.approval_id, (MARGIN_X + PAD, PAD - 2),
                          self.viewport())
        box.decided.connect(self.approvalDecided)
        return box

    def _fork_widget(self, entry: Entry, row: int) -> QWidget:
        fork = entry.fork
        source = fork.source
        point = fork_point(entry, self._message_text, self._message_above(row),
                           self._message_kind)
        header = ForkHeader(source, self.title_of(source), point,
                            self.viewport(), margins=(MARGIN_X + PAD, PAD - 2),
                            subagent=fork.relation == "subagent",
                            continued=fork.relation == "continued")
        anchor, boundary = fork.anchor_message, fork.boundary
        if (fork.before and anchor and not header.gone
                and boundary is not None and self.row_links.anchor_text is not None
                and not self._message_text(anchor)):
            def landed(text: str) -> None:
                if text and self.fork_header() is header:  # still the one shown
                    header.set_point(fork_point(entry, lambda _m: text))
                    index = self.indexAt(header.geometry().center())
                    if index.isValid():
                        self.delegate.sizeHintChanged.emit(index)
            self.row_links.anchor_text(source, boundary, anchor, landed)
        header.sourceRequested.connect(self.sourceRequested)
        header.stepRequested.connect(self.siblingStep)
        header.compareRequested.connect(self.compareRequested)
        if row == self._own_fork_row():
            header.set_position(self.fork_position)
            header.set_changed(self.source_changed)
            header.set_shared(self.shared_prefix)
        return header

    def _own_fork_row(self) -> int:
        """The row of the opened child's own fork record: the last one. A fork of a fork
        also holds the records its source copied (where that source was cut from its own
        source); those showed the child's sibling arrows and source warning too."""
        model = self.transcript()
        for row in range(model.rowCount() - 1, -1, -1):
            entry = model.entry(row)
            if entry is not None and entry.kind == FORK:
                return row
        return -1

    def fork_header(self) -> ForkHeader | None:
        """The opened child's own fork record widget, if it is loaded."""
        row = self._own_fork_row()
        widget = self.indexWidget(self.model().index(row, 0)) if row >= 0 else None
        return widget if isinstance(widget, ForkHeader) else None

    def set_fork_context(self, position: tuple[int, int] | None,
                         changed: bool) -> None:
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

    def set_shared_prefix(self, text: str | None) -> None:
        """What the opened fork's shared prefix used ("shared prefix $…"), shown in its
        fork record (now and when it is loaded)."""
        self.shared_prefix = text
        header = self.fork_header()
        if header is not None and header.shared.text() != (text or ""):
            header.set_shared(text)
            index = self.indexAt(header.geometry().center())
            if index.isValid():
                self.delegate.sizeHintChanged.emit(index)

    def _message_above(self, row: int) -> tuple[str, str] | None:
        """The kind and words of the last message above `row` (loaded), if any."""
        model = self.transcript()
        for above in range(row - 1, -1, -1):
            entry = model.entry(above)
            if entry is not None and entry.kind in (USER, ASSISTANT) and entry.text.strip():
                return entry.kind, entry.text
        return None

    def _message_kind(self, message_id: str) -> str | None:
        model = self.transcript()
        row = model.row_of_message(message_id)
        entry = model.entry(row) if row >= 0 else None
        return entry.kind if entry is not None else None

    def _message_text(self, message_id: str) -> str | None:
        model = self.transcript()
        row = model.row_of_message(message_id)
        entry = model.entry(row) if row >= 0 else None
        return entry.text if entry is not None else None


def _tab_parts(widget: QWidget) -> list[QWidget]:
    """`widget` and its children that Tab stops at, in order."""
    return [part for part in [widget, *widget.findChildren(QWidget)]
            if part.focusPolicy() & Qt.FocusPolicy.TabFocus]
