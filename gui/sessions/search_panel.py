"""Search everything (Ctrl+Shift+F): words over every session's messages, tool calls and
titles, answered by the host's full-text index (`session.search`), shown as a list of
hits (session, time, snippet). Activating a hit opens its session at that message.

The filter box above the tree still filters the tree by title; this panel is the way to
find text in sessions that are not open. It takes the session list's place while it is
open (as a sidebar's Search view does in an editor), so that neither is squeezed beside
the other in a small window; closing it (its ✕, or Escape in an empty box or in the
results) brings the list back.

Hits are grouped by session (gui/sessions/search_results) and narrowed by the agent the
session came from, how recent, who wrote the words and the folder the session worked in
(gui/domain/search_hits).

Signals (SearchPanel): `resultActivated(session_id, seq)`, `hitOpened(session_id, seq,
words)` (the words the hit found, to mark in the transcript), `closeRequested()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.api import Json
from forkwise.core.client.rows import SearchHit, search_hit
from forkwise.gui.domain.search_hits import DATES, ROLES, Filters, marked_words
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.sessions.search_results import (
    HIT_ROLE,
    HitDelegate,
    SearchResultsModel,
    ShownHit,
)
from forkwise.gui.widgets.field_keys import FieldKeys
from forkwise.gui.widgets.source_badges import FOREIGN, tool_name

__all__ = ["HIT_ROLE", "SearchPanel"]
#: how many hits a search asks for
LIMIT = 100
#: asked for when a filter narrows them (the host's most)
FILTERED_LIMIT = 500
#: typing pauses this long (ms) before the host is asked
DEBOUNCE_MS = 150


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
    hitOpened = Signal(str, int, list)
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
        self.agent = _combo(self, "searchAgent", "Only sessions of this agent", [
            ("All agents", None), ("Forkwise", "forkwise"),
            *((tool_name(tool), tool) for tool in FOREIGN)])
        self.date = _combo(self, "searchDate", "Only words written since", DATES)
        self.role = _combo(self, "searchRole", "Only words written by", ROLES)
        # the folders of the sessions the latest answer found (`_folders`)
        self.folder = _combo(self, "searchFolder", "Only sessions of this folder",
                             [("All folders", None)])
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        for combo in (self.agent, self.date, self.role):
            filters.addWidget(combo, 1)
        for combo in (self.agent, self.date, self.role, self.folder):
            combo.currentIndexChanged.connect(self._refilter)
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
        layout.addLayout(filters)
        layout.addWidget(self.folder)  # a row of its own: the pane stays as narrow as it was
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self._asked = ""  # the query whose answer is wanted (older answers are dropped)
        self._found: list[ShownHit] = []  # the latest answer, before the filters
        self._limit = LIMIT  # what the latest answer was asked for
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
        limit = self._limit = FILTERED_LIMIT if self.filters().active else LIMIT
        self.controller.ops.run(
            self.controller.client.search(query, limit),
            lambda hits: self._answered(query, hits),
            lambda exc: self._failed(query, exc),
            what="Searching",
        )

    def _answered(self, query: str, hits: list[Json]) -> None:
        if query != self._asked:
            return  # overtaken by what was typed since
        self._found = [self._named(search_hit(hit)) for hit in hits]
        self._folders()
        self._show(query)

    def _folder_of(self, sid: str) -> str:
        summary = self.controller.tree.summary(sid)
        return str(summary["cwd"] or "") if summary is not None else ""

    def _folders(self) -> None:
        """The folder filter offers the folders of the sessions found (the one chosen
        stays while an answer still has it)."""
        chosen = self.folder.currentData()
        folders = sorted({f for f in map(self._folder_of, {h["sessionId"] for h in self._found})
                          if f} | ({chosen} if chosen else set()))
        self.folder.blockSignals(True)
        try:
            self.folder.clear()
            self.folder.addItem("All folders", None)
            for folder in folders:
                self.folder.addItem(Path(folder).name or folder, folder)
                self.folder.setItemData(self.folder.count() - 1, folder,
                                        Qt.ItemDataRole.ToolTipRole)
            self.folder.setCurrentIndex(max(0, self.folder.findData(chosen)))
        finally:
            self.folder.blockSignals(False)

    def filters(self) -> Filters:
        return Filters(self.agent.currentData(), self.date.currentData(),
                       self.role.currentData(), self.folder.currentData())

    def _refilter(self) -> None:
        """A filter changed: the hits kept are narrowed anew; asked again when the
        answer was cut at the unfiltered count (the filter may keep hits beyond it)."""
        query = self.box.text().strip()
        if query and query == self._asked and (
                self._limit < FILTERED_LIMIT and len(self._found) >= self._limit
                and self.filters().active):
            self.run()
        elif query == self._asked:
            self._show(query)

    def _show(self, query: str) -> None:
        if not query:
            return
        tree = self.controller.tree

        def agent_of(sid: str) -> str:
            summary = tree.summary(sid)
            return str(summary["source"] or "forkwise") if summary is not None else ""

        now = datetime.now(UTC)
        kept = [h for h in self._found
                if self.filters().keeps(h, agent_of, now, self._folder_of)]
        self.model.set_hits(kept)
        more = "+" if len(self._found) >= self._limit else ""
        if not self._found:
            self.status.setText(f"Nothing found for “{query}”")
        elif not kept:
            self.status.setText(f"{len(self._found)}{more} found, none with these filters")
        else:
            sessions = len(self.model.groups)
            self.status.setText(
                f"{len(kept)}{more if len(kept) == len(self._found) else ''} found in "
                f"{sessions} session{'s' if sessions != 1 else ''}, latest first")

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
                self.results.setCurrentIndex(self.model.index(self.model.hit_row(0)))

    def _leave(self) -> None:
        """Escape in an empty box or in the results, or ✕: the panel closes, back to the
        sessions."""
        self.closeRequested.emit()

    def _activated(self, index: QModelIndex) -> None:
        hit = index.data(HIT_ROLE)
        if isinstance(hit, dict):
            sid, seq = str(hit["sessionId"]), int(hit["seq"])
            self.resultActivated.emit(sid, seq)
            self.hitOpened.emit(sid, seq, marked_words(str(hit["snippet"])))



def _combo(parent: QWidget, name: str, tip: str,
           choices: Sequence[tuple[str, str | int | None]]) -> QComboBox:
    combo = QComboBox(parent)
    combo.setObjectName(name)
    combo.setToolTip(tip)
    combo.setAccessibleName(tip)
    # three in a row in a narrow pane: they shrink rather than widen it
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(4)
    for label, value in choices:
        combo.addItem(label, value)
    return combo
