"""The opened session's transcript as a list model, paged lazily from the client.

Events are fetched a page at a time (`canFetchMore`/`fetchMore` ask for the next page via
`pageRequested`; the window's controller fetches it and hands it to `add_page`). Live
events, streamed text and replace-in-place arrive as notifications and change rows one by
one. Switching to another session is the only reset.

A transcript opened `from_end` (how every session opens) starts with its last page, from
the first turn that begins in it; earlier turns are added above on request
(`fetch_earlier`), a page at a time, so a long session's end shows without reading the
rest of it. One opened `at_seq` (a search result) starts with the page around that event,
from the start of its turn, and says which row holds it (`targetLoaded`).

Signals: `pageRequested(session_id, after, limit)`, `streamingChanged(bool)`,
`earlierChanged(bool)` (whether earlier events are left to show), `targetLoaded(row)`
(the row of the event a transcript was opened at, once its page is in).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from forkwise.core.client.rows import SessionRow, session_row
from forkwise.core.reading.entries import (
    APPROVAL,
    ASSISTANT,
    FORK,
    MODEL,
    REASONING,
    STREAM,
    TOOL,
    TURN_END,
    USER,
    Entry,
    TranscriptBuilder,
)
from forkwise.core.reading.render import has_noise
from forkwise.gui.domain.message_actions import ActionState, copy_text, message_actions

log = logging.getLogger(__name__)

Json = dict[str, Any]
Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the default parent: the root

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
SEQ_ROLE = Qt.ItemDataRole.UserRole + 3

PAGE_SIZE = 400
#: events in the first page of a transcript: a few screens, so that it paints without
#: laying out hundreds of rows first; the pages after it are PAGE_SIZE
FIRST_PAGE = 100

_SPEAKER = {
    "user": "You",
    "assistant": "Assistant",
    "reasoning": "Reasoning",
    "tool": "Tool call",
    "approval": "Approval",
    "turn": "Turn",
    "fork": "Forked",
    "model": "Model",
    "title": "Title",
    "summary": "Summary",
    "stream": "Assistant (writing…)",
}


class TranscriptModel(QAbstractListModel):
    pageRequested = Signal(str, int, int)
    streamingChanged = Signal(bool)
    earlierChanged = Signal(bool)
    targetLoaded = Signal(int)

    def __init__(self, parent: QObject | None = None, page_size: int = PAGE_SIZE,
                 first_page: int = FIRST_PAGE) -> None:
        super().__init__(parent)
        self.page_size = page_size
        self.first_page = min(first_page, page_size)
        self._asked = 0  # events the page in flight was asked for
        self.session_id: str | None = None
        #: the opened session's row (None: no session is open)
        self.summary: SessionRow | None = None
        self.builder = TranscriptBuilder()
        self.events: list[Json] = []
        self.at_end = True
        self.fetching = False
        #: rows being inserted are a page asked for (not live events at the end)
        self.paging = False
        #: events up to this seq are not loaded (a transcript opened from its end)
        self.base = 0
        self._from_end = False
        #: the event a transcript was opened at (a search result), until its page is in
        self._target: int | None = None
        self._earlier_asked: int | None = None  # `after` of the earlier page in flight
        self.stream: Entry | None = None
        self._shown = 0  # builder entries announced to views (rows change only in signals)
        #: every reasoning shown open (the person's choice, kept from session to session)
        self.reasoning_shown = False

    # --- opening and paging -------------------------------------------------------

    def open(self, session_id: str | None, summary: Mapping[str, Any] | None = None, *,
             from_end: bool = False, at_seq: int | None = None) -> None:
        """Show another session (a reset: everything on screen changes); `from_end`: its
        last page first; `at_seq`: the page around that event first (see the module
        docstring)."""
        had_earlier = self.base > 0
        self.beginResetModel()
        self.session_id = session_id
        self.summary = (session_row({**(summary or {}), "id": session_id})
                        if session_id is not None else None)
        self.builder = self._new_builder(0)
        self.events = []
        self._shown = 0
        self.base = 0
        self._from_end = from_end and at_seq is None
        self._target = at_seq if at_seq and at_seq > 0 else None
        self._earlier_asked = None
        self.at_end = session_id is None
        self.fetching = False
        had_stream, self.stream = self.stream is not None, None
        self.endResetModel()
        if had_stream:
            self.streamingChanged.emit(False)
        if had_earlier:
            self.earlierChanged.emit(False)

    def _new_builder(self, base: int) -> TranscriptBuilder:
        row = self.summary
        builder = TranscriptBuilder(
            row["parentSession"] if row else None, (row["seedLength"] or 0) if row else 0
        )
        builder.last_seq = base  # events up to base are not folded in
        return builder

    @property
    def opened_at_end(self) -> bool:
        """The transcript was opened at its end (a view follows it there)."""
        return self._from_end

    @property
    def loaded_seq(self) -> int:
        return self.builder.last_seq

    def canFetchMore(self, parent: Index = NO_PARENT) -> bool:
        return not parent.isValid() and self.session_id is not None and not self.at_end \
            and not self.fetching

    def fetchMore(self, parent: Index = NO_PARENT) -> None:
        if not self.canFetchMore(parent) or self.session_id is None:
            return
        self.fetching = True
        total = self.summary["events"] if self.summary else 0
        if self._target is not None and not self.events and not self.loaded_seq:
            # the page around the target: half a page of what leads to it (its turn's
            # start, unless that turn is longer than half a page)
            self.builder.last_seq = max(0, self._target - self.page_size // 2)
            self._asked = self.page_size
        elif self._from_end and not self.loaded_seq and total > self.page_size:
            self.builder.last_seq = total - self.page_size  # the last page first
            self._asked = self.page_size + 1  # one more: fewer back says it is the end
        else:
            self._asked = self.page_size if self.loaded_seq else self.first_page
        self.pageRequested.emit(self.session_id, self.loaded_seq, self._asked)

    def can_fetch_earlier(self) -> bool:
        return self.session_id is not None and self.base > 0 and not self.fetching

    def fetch_earlier(self) -> None:
        """Ask for the page before the first loaded event."""
        if not self.can_fetch_earlier() or self.session_id is None:
            return
        self.fetching = True
        after = max(0, self.base - self.page_size)
        self._earlier_asked = after
        self.pageRequested.emit(self.session_id, after, self.base - after)

    def add_page(self, session_id: str, after: int, events: list[Json]) -> None:
        """A page asked for by `pageRequested` arrived."""
        if session_id == self.session_id and after == self._earlier_asked:
            self.fetching = False
            self._earlier_asked = None
            self.paging = True
            try:
                self._prepend(after, events)
            finally:
                self.paging = False
            return
        if session_id != self.session_id or after != self.loaded_seq:
            if session_id == self.session_id:
                self.fetching = False
            return  # an answer for another session, or overtaken by live events
        self.fetching = False
        if len(events) < self._asked:
            self.at_end = True
        if after and not self.events:  # the first page of one opened at its end or a seq
            events = self._from_turn_start(events)
            start = int(events[0]["seq"]) - 1 if events else after
            self.builder.last_seq = self.base = start
            if start:
                self.earlierChanged.emit(True)
        self.paging = True
        try:
            self._append(events)
        finally:
            self.paging = False
        target, self._target = self._target, None
        if target is not None:
            self.targetLoaded.emit(self.row_of_seq(target))

    @staticmethod
    def _from_turn_start(events: list[Json]) -> list[Json]:
        """`events` from the first turn that starts in them (all of them when none does):
        a turn is shown whole, never from its middle."""
        for i, event in enumerate(events):
            if event.get("type") == "turn/start":
                return events[i:]
        return events

    def _prepend(self, after: int, events: list[Json]) -> None:
        """An earlier page arrived: its whole turns go above the rows shown, which are
        folded anew below them (a turn the shown rows began inside of now has its start)."""
        earlier = [e for e in events if int(e.get("seq", 0)) <= self.base]
        kept = self._from_turn_start(earlier) if after else earlier
        start = int(kept[0]["seq"]) - 1 if kept else self.base
        if start >= self.base:
            return  # the host sent nothing before what is shown
        builder = self._new_builder(start)
        builder.feed([*kept, *self.events])
        self._reasoning_as_chosen(builder.entries)
        added = len(builder.entries) - len(self.builder.entries)
        if added < 0:
            # the shown rows began inside a turn (one longer than a page) and the earlier
            # events folded some of them together: everything is shown anew
            self.beginResetModel()
            self.builder, self.events, self.base = builder, [*kept, *self.events], start
            self._shown = len(builder.entries)
            self.endResetModel()
        else:
            if added:
                self.beginInsertRows(QModelIndex(), 0, added - 1)
            self.builder, self.events, self.base = builder, [*kept, *self.events], start
            self._shown += added
            if added:
                self.endInsertRows()
            if self._shown > added:  # the same entries, folded anew
                self.dataChanged.emit(self.index(added), self.index(self._shown - 1))
        if start == 0:
            self.earlierChanged.emit(False)

    def page_failed(self, session_id: str) -> None:
        if session_id == self.session_id:
            self.fetching = False

    # --- live changes ---------------------------------------------------------------

    def append_events(self, session_id: str, events: list[Json]) -> None:
        """`session/events`: appended in order; ignored while earlier pages are missing."""
        if session_id != self.session_id or not events:
            return
        fresh = [e for e in events if int(e.get("seq", 0)) > self.loaded_seq]
        if not fresh:
            return
        if int(fresh[0]["seq"]) != self.loaded_seq + 1:
            self.at_end = False  # a gap: paging will fetch it
            return
        if not self.at_end:
            return
        self._append(fresh)

    def _append(self, events: list[Json]) -> None:
        if not events:
            return
        if self.stream is not None and any(
            e.get("type") in ("message", "turn/end") for e in events
        ):
            self._drop_stream()
        self.events.extend(events)
        first, changed = self.builder.feed(events)
        last = len(self.builder.entries) - 1
        self._reasoning_as_chosen(self.builder.entries[first:], first)
        if last >= first:
            self.beginInsertRows(QModelIndex(), first, last)
            self._shown = last + 1
            self.endInsertRows()
        for row in sorted(changed):
            idx = self.index(row)
            self.dataChanged.emit(idx, idx)

    def delta(self, session_id: str, turn: str | None, text: str) -> None:
        """`session/delta`: streamed text of the step being written (one row at the end)."""
        if session_id != self.session_id or not self.at_end or not text:
            return
        if self.stream is None:
            row = self._shown
            self.beginInsertRows(QModelIndex(), row, row)
            self.stream = Entry(STREAM, -1, turn, text)
            self.endInsertRows()
            self.streamingChanged.emit(True)
        else:
            self.stream.text += text
            idx = self.index(self._shown)
            self.dataChanged.emit(idx, idx)

    def _drop_stream(self) -> None:
        if self.stream is None:
            return
        row = self._shown
        self.beginRemoveRows(QModelIndex(), row, row)
        self.stream = None
        self.endRemoveRows()
        self.streamingChanged.emit(False)

    def end_stream(self, session_id: str) -> None:
        if session_id == self.session_id:
            self._drop_stream()

    def truncate(self, session_id: str, through: int) -> None:
        """Replace in place: rows after `through` go; this is never shown as an entry."""
        if session_id != self.session_id:
            return
        self._drop_stream()
        if through >= self.loaded_seq:
            return
        if through < self.base:  # nothing shown is kept: show the session again
            self.open(session_id, self.summary)
            self.fetchMore()
            return
        kept = [e for e in self.events if int(e.get("seq", 0)) <= through]
        builder = self._new_builder(self.base)
        builder.feed(kept)
        keep_rows = len(builder.entries)
        old_rows = self._shown
        if keep_rows < old_rows:
            self.beginRemoveRows(QModelIndex(), keep_rows, old_rows - 1)
            self._shown = keep_rows  # the kept rows read as before until dataChanged
            self.endRemoveRows()
        self.builder, self.events, self._shown = builder, kept, keep_rows
        self.at_end = True
        if keep_rows:
            self.dataChanged.emit(self.index(0), self.index(keep_rows - 1))

    def show_reasoning(self, shown: bool) -> None:
        """Every reasoning open (or shut), those that come later too (a page, a turn)."""
        self.reasoning_shown = shown
        rows = self._reasoning_as_chosen(self.builder.entries[:self._shown])
        if rows:
            self.dataChanged.emit(self.index(rows[0]), self.index(rows[-1]))

    def _reasoning_as_chosen(self, entries: list[Entry], first: int = 0) -> list[int]:
        """Open or shut each reasoning of `entries` (rows from `first`) as chosen: the rows
        that changed."""
        changed = []
        for row, entry in enumerate(entries, start=first):
            if entry.kind == REASONING and entry.expanded != self.reasoning_shown:
                entry.expanded = self.reasoning_shown
                changed.append(row)
        return changed

    def toggle_expanded(self, row: int) -> None:
        entry = self.entry(row)
        if entry is not None and (entry.kind in (REASONING, TOOL)
                                  or (entry.kind == USER and has_noise(entry))):
            entry.expanded = not entry.expanded
            idx = self.index(row)
            self.dataChanged.emit(idx, idx)

    # --- lookups ------------------------------------------------------------------

    def entry(self, row: int) -> Entry | None:
        if 0 <= row < self._shown:
            return self.builder.entries[row]
        if row == self._shown and self.stream is not None:
            return self.stream
        return None

    def row_of_seq(self, seq: int) -> int:
        """The row that shows event `seq` (or the first one after it); -1 when none."""
        for row, entry in enumerate(self.builder.entries[: self._shown]):
            if entry.seq >= seq:
                return row
        return -1

    def row_of_message(self, message_id: str) -> int:
        for row, entry in enumerate(self.builder.entries):
            if entry.message_id == message_id and entry.kind in (USER, ASSISTANT):
                return row
        return -1

    def actions_for(self, row: int) -> list[ActionState]:
        entry = self.entry(row)
        if entry is not None and entry.kind == STREAM:
            entry = None
        return message_actions(entry, self.builder, complete=self.at_end)

    @property
    def running(self) -> bool:
        return self.builder.open_turn is not None

    @property
    def agents_turn(self) -> bool:
        """The open turn is the agent's an imported session came from: its events come
        from the agent's file (Claude Code still writing it), so Forkwise neither stops
        it nor writes into it. Before any page is in, an imported session's open turn is
        taken as its agent's (until its events say otherwise)."""
        turn = self.builder.open_turn
        if turn is not None:
            info = self.builder.turns.get(turn)
            return info is not None and info.agent
        return not self.events and self.summary is not None and bool(self.summary["source"])

    # --- QAbstractItemModel -------------------------------------------------------

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        if parent.isValid():
            return 0
        return self._shown + (1 if self.stream is not None else 0)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.column() != 0:
            return None
        entry = self.entry(index.row())
        if entry is None:
            return None
        try:
            if role == ENTRY_ROLE:
                return entry
            if role == KIND_ROLE:
                return entry.kind
            if role == SEQ_ROLE:
                return entry.seq
            if role == Qt.ItemDataRole.DisplayRole:
                return plain_text(entry)
            if role in (Qt.ItemDataRole.AccessibleTextRole, Qt.ItemDataRole.ToolTipRole):
                speaker = _SPEAKER.get(entry.kind, entry.kind)
                if role == Qt.ItemDataRole.ToolTipRole:
                    return None if entry.kind != FORK else "Click the link to show the source"
                return f"{speaker}: {plain_text(entry)[:500]}"
        except Exception:
            log.exception("transcript row %d failed to build", index.row())
            shown = role == Qt.ItemDataRole.DisplayRole
            return "(this entry could not be shown)" if shown else None
        return None


def plain_text(entry: Entry) -> str:
    """The entry as one line of plain text (display role, copying, accessibility)."""
    kind = entry.kind
    if kind == TURN_END:
        error = entry.turn_error
        return f"Turn {entry.text}: {error}" if error else f"Turn {entry.text}"
    if kind == APPROVAL:
        return f"Approval for {entry.approval_tool}: {entry.decision or 'waiting for you'}"
    if kind == FORK:
        fork = entry.fork
        return f"Forked from {fork.source} at event {fork.boundary}"
    if kind == MODEL:
        return f"Model: {entry.text}"
    return copy_text(entry)
