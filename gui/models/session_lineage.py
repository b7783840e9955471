"""The lineage tree's nodes and the rows views are handed: which session sits beneath which
(forks and subagents), the top-level rows given a page at a time, and the indexes, counts
and flags views ask of every row. Changes, order and what cells answer: session_model.

A child whose parent is not known yet waits at the top level (session_model moves it
beneath its parent when that arrives).

Top-level rows are handed to views a page at a time (`canFetchMore`/`fetchMore`, like
qutebrowser's completion model): a QTreeView lays out every row it is given, calling
`index()`, `flags()` and `rowCount()` in Python for each — 0.1 to 0.2 s for 10,000 sessions
before the first frame. The rest of the catalogue is held (in order, kept current) and
shown as the view scrolls to the end; `reveal` and `fetch_all` show it on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from forkwise.gui.domain.siblings import display_title
from forkwise.gui.models.session_rows import COLUMNS

if TYPE_CHECKING:
    from forkwise.core.client.rows import SessionRow

Json = dict[str, Any]
Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the default parent: the root

ROOT_KEY = 0
_COLUMN_COUNT = len(COLUMNS)
_ENABLED = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
_DISABLED = Qt.ItemFlag.ItemIsSelectable
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


class Node:
    __slots__ = ("children", "key", "parent", "sid")

    def __init__(self, key: int, sid: str | None, parent: Node | None) -> None:
        self.key = key
        self.sid = sid
        self.parent = parent
        self.children: list[Node] = []

    def row(self) -> int:
        return self.parent.children.index(self) if self.parent is not None else 0


class SessionLineage(QAbstractItemModel):
    """The nodes of the lineage tree and the rows views are given (SessionTreeModel's base).

    Signals: `rowsFetched(first, last)` — top-level rows first..last were just handed to
    the views (by `fetchMore`, `reveal` or `fetch_all`)."""

    rowsFetched = Signal(int, int)

    def __init__(self, parent: QObject | None, page_rows: int) -> None:
        super().__init__(parent)
        self.page_rows = page_rows
        self._shown = 0  # root.children[:_shown] have rows; the rest wait for fetchMore
        self._root = Node(ROOT_KEY, None, None)
        self._nodes: dict[str, Node] = {}
        #: a fork's first question of its own, when read (`set_question`): its name
        self.questions: dict[str, str] = {}
        self._by_key: dict[int, Node] = {ROOT_KEY: self._root}
        self._summaries: dict[str, SessionRow] = {}
        #: keys of the rows whose session cannot be read (`flags`: not enabled)
        self._broken: set[int] = set()
        self._next_key = 1

    # --- paging of the top-level rows ---------------------------------------------

    def canFetchMore(self, parent: Index) -> bool:
        return not parent.isValid() and self._shown < len(self._root.children)

    def fetchMore(self, parent: Index) -> None:
        if self.canFetchMore(parent):
            self._show_through(self._shown + self.page_rows - 1)

    def reveal(self, sid: str, column: int = 0) -> QModelIndex:
        """The index of `sid`, fetching top-level rows down to its own if need be."""
        node = self._nodes.get(sid)
        if node is None:
            return QModelIndex()
        top = self._top(node)
        if top.parent is self._root:
            self._show_through(top.row())
        return self.index_for(sid, column)

    def fetch_all(self) -> None:
        """Every row (a filter has to see them all)."""
        self._show_through(len(self._root.children) - 1)

    def _show_through(self, row: int) -> None:
        last = min(row, len(self._root.children) - 1)
        first = self._shown
        if last < first:
            return
        self.beginInsertRows(QModelIndex(), first, last)
        self._shown = last + 1
        self.endInsertRows()
        self.rowsFetched.emit(first, last)

    def _top(self, node: Node) -> Node:
        while node.parent is not None and node.parent is not self._root:
            node = node.parent
        return node

    def _has_row(self, node: Node) -> bool:
        """Whether views know `node` (its top-level row is fetched); the root: always."""
        if node is self._root:
            return True
        top = self._top(node)
        return top.parent is self._root and top.row() < self._shown

    def _row_shown(self, parent: Node, row: int) -> bool:
        """Whether row `row` of `parent` (an existing row) is known to views."""
        if parent is self._root:
            return row < self._shown
        return self._has_row(parent)

    def _insert_shown(self, parent: Node, row: int) -> bool:
        """Whether a row inserted at `row` of `parent` is shown at once: anywhere under a
        shown parent; at the top level among the fetched rows, or at the end when
        everything is fetched."""
        if parent is self._root:
            return row < self._shown or self._shown == len(parent.children)
        return self._has_row(parent)

    # --- lineage: where a session goes --------------------------------------------

    def _attach(self, sid: str) -> None:
        """Place `sid` (and, recursively, its parent first) without signals."""
        if sid in self._nodes:
            return
        parent_id = self._summaries[sid]["parentSession"]
        parent = self._root
        if parent_id in self._summaries and parent_id != sid and not self._is_below(parent_id, sid):
            self._attach(parent_id)
            parent = self._nodes[parent_id]
        node = self._new_node(sid, parent)
        parent.children.append(node)

    def _new_node(self, sid: str, parent: Node) -> Node:
        node = Node(self._next_key, sid, parent)
        self._next_key += 1
        if self._summaries[sid]["error"]:
            self._broken.add(node.key)
        self._nodes[sid] = node
        self._by_key[node.key] = node
        return node

    def _is_below(self, candidate: str, ancestor: str) -> bool:
        """True if following parentSession from `candidate` reaches `ancestor` (a cycle)."""
        seen: set[str] = set()
        current: str | None = candidate
        while current is not None and current not in seen:
            if current == ancestor:
                return True
            seen.add(current)
            row = self._summaries.get(current)
            current = row["parentSession"] if row is not None else None
        return False

    def _placement(self, sid: str) -> Node:
        parent_id = self._summaries[sid]["parentSession"]
        if parent_id in self._nodes and parent_id != sid and not self._is_below(parent_id, sid):
            return self._nodes[parent_id]
        return self._root

    # --- lookups ------------------------------------------------------------------

    def summary(self, sid: str) -> SessionRow | None:
        return self._summaries.get(sid)

    def folders(self) -> set[str]:
        """The sessions' working folders (`cwd`)."""
        return {str(s["cwd"] or "") for s in self._summaries.values()}

    def session_ids(self) -> list[str]:
        return list(self._summaries)

    def activity_times(self) -> list[str]:
        """The sessions' last activity (`updated`), as the host wrote it."""
        return [str(s["updated"] or "") for s in self._summaries.values()]

    def index_for(self, sid: str, column: int = 0) -> QModelIndex:
        """The index of `sid`; invalid while its top-level row is not fetched (`reveal`)."""
        node = self._nodes.get(sid)
        if node is None or not self._has_row(node):
            return QModelIndex()
        return self.createIndex(node.row(), column, node.key)

    def parent_of(self, sid: str) -> str | None:
        """The session this row is shown beneath (None at the top level)."""
        node = self._nodes.get(sid)
        return node.parent.sid if node is not None and node.parent is not None else None

    def lineage_parents(self, first: int = 0, last: int | None = None) -> list[str]:
        """Sessions with rows beneath them, in the fetched top-level rows first..last (all
        fetched rows by default): what the tree expands once they are shown."""
        end = self._shown if last is None else min(last + 1, self._shown)
        found: list[str] = []
        stack = [n for n in self._root.children[first:end] if n.children]
        while stack:
            node = stack.pop()
            if node.sid is not None:
                found.append(node.sid)
            stack.extend(c for c in node.children if c.children)
        return found

    def children_of(self, sid: str | None) -> list[str]:
        node = self._root if sid is None else self._nodes.get(sid)
        return [c.sid for c in node.children if c.sid] if node is not None else []

    def _title_of(self, sid: str) -> str:
        return display_title(sid, self.summary, self.children_of, asked=self.questions.get)

    def title_of(self, sid: str) -> str:
        """What the session is called on screen (a fork not renamed yet: after its source,
        or after the question it asked of its own once that is known, `set_question`)."""
        return display_title(sid, self.summary, self.children_of, asked=self.questions.get)

    def _index_of(self, node: Node) -> QModelIndex:
        if node is self._root:
            return QModelIndex()
        return self.createIndex(node.row(), 0, node.key)

    def _node(self, index: Index) -> Node:
        if not index.isValid():
            return self._root
        return self._by_key.get(index.internalId(), self._root)

    # --- QAbstractItemModel -------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = NO_PARENT) -> QModelIndex:
        # a view asks this of every visible cell at each paint: the top level first
        if not 0 <= column < _COLUMN_COUNT or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row >= self._shown:
                return QModelIndex()
            return self.createIndex(row, column, self._root.children[row].key)
        if parent.column() != 0:
            return QModelIndex()
        node = self._by_key.get(parent.internalId(), self._root)
        if row >= (self._shown if node is self._root else len(node.children)):
            return QModelIndex()
        return self.createIndex(row, column, node.children[row].key)

    def parent(self, index: Index = NO_PARENT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = self._by_key.get(index.internalId())
        if node is None or node.parent is None or node.parent is self._root:
            return QModelIndex()
        return self._index_of(node.parent)

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        # asked of every row a view lays out (100,000 calls when all are fetched): an
        # invalid index (the root) has internal id 0, which no row's key is
        key = parent.internalId()
        if not key:
            return self._shown
        if parent.column() != 0:
            return 0
        node = self._by_key.get(key, self._root)
        return self._shown if node is self._root else len(node.children)

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and 0 <= section < len(COLUMNS) and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        # asked twice of every row a view lays out: two lookups by key (`_broken`)
        key = index.internalId()
        if not key:  # an invalid index (no row has key 0)
            return _NO_FLAGS
        if key in self._broken or key not in self._by_key:
            return _DISABLED
        return _ENABLED
