"""The lineage tree: sessions grouped by where they came from (forks and subagents).

Holds ids and summary dicts from the client catalogue and builds display data in `data()`.
Changes arrive row by row (`upsert`, `remove`); only the first load resets the model. A
child whose parent is not known yet waits at the top level and is moved beneath its
parent when that arrives.

The model keeps its rows in last-activity order itself (`sort`; the filter proxy passes
its sort on to it): a QSortFilterProxyModel sorting 10,000 rows calls `data()` from C++
about 300,000 times, 1.5 s at load, where a Python sort by key takes milliseconds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from .badges import badge_icon

log = logging.getLogger(__name__)

Json = dict[str, Any]
Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the default parent: the root

COLUMNS = ("Title", "Last activity", "Messages", "Model")
TITLE, ACTIVITY, MESSAGES, MODEL = range(4)

ID_ROLE = Qt.ItemDataRole.UserRole + 1
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2
UPDATED_ROLE = Qt.ItemDataRole.UserRole + 3
RELATION_ROLE = Qt.ItemDataRole.UserRole + 4
RUNNING_ROLE = Qt.ItemDataRole.UserRole + 5

_ROOT = 0
_ENABLED = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
_DISABLED = Qt.ItemFlag.ItemIsSelectable


class _Node:
    __slots__ = ("children", "key", "parent", "sid")

    def __init__(self, key: int, sid: str | None, parent: _Node | None) -> None:
        self.key = key
        self.sid = sid
        self.parent = parent
        self.children: list[_Node] = []

    def row(self) -> int:
        return self.parent.children.index(self) if self.parent is not None else 0


class SessionTreeModel(QAbstractItemModel):
    """Summary dicts (the client API's shape) as a tree of lineage."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = _Node(_ROOT, None, None)
        self._nodes: dict[str, _Node] = {}
        self._by_key: dict[int, _Node] = {_ROOT: self._root}
        self._summaries: dict[str, Json] = {}
        self._next_key = 1
        self._newest_first: bool | None = None  # None: in arrival order (never sorted)

    # --- changes ------------------------------------------------------------------

    def load(self, summaries: Iterable[Json]) -> None:
        """The first full load (the only reset this model does)."""
        self.beginResetModel()
        self._root.children.clear()
        self._nodes.clear()
        self._by_key = {_ROOT: self._root}
        self._summaries = {}
        items = sorted(summaries, key=lambda s: s.get("created") or "")
        for summary in items:
            self._summaries[summary["id"]] = dict(summary)
        for summary in items:
            self._attach(summary["id"])
        self._sort_children(self._root)
        self.endResetModel()

    # --- order ----------------------------------------------------------------------

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Every level by last activity (whatever the column, like the proxy's sort role);
        rows that change activity later move to their place (`upsert`)."""
        newest_first = order == Qt.SortOrder.DescendingOrder
        if column < 0 or newest_first == self._newest_first:
            return
        self.layoutAboutToBeChanged.emit()
        self._newest_first = newest_first
        self._sort_children(self._root)
        old = self.persistentIndexList()
        new = []
        for index in old:
            node = self._by_key.get(index.internalId())
            if node is None or node.parent is None:
                new.append(QModelIndex())
            else:
                new.append(self.createIndex(node.row(), index.column(), node.key))
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    def _activity(self, node: _Node) -> str:
        return self._activity_of(node.sid) if node.sid else ""

    def _activity_of(self, sid: str) -> str:
        return str(self._summaries[sid].get("updated") or "")

    def _sort_children(self, node: _Node) -> None:
        if self._newest_first is None:
            return
        stack = [node]
        while stack:
            current = stack.pop()
            current.children.sort(key=self._activity, reverse=self._newest_first)
            stack.extend(c for c in current.children if c.children)

    def _slot(self, siblings: Sequence[_Node], sid: str) -> int:
        """Where `sid` goes among `siblings` (not containing it) in the current order."""
        if self._newest_first is None:
            return len(siblings)
        key = self._activity_of(sid)
        for row, other in enumerate(siblings):
            theirs = self._activity(other)
            if (theirs < key) if self._newest_first else (theirs > key):
                return row
        return len(siblings)

    def _attach(self, sid: str) -> None:
        """Place `sid` (and, recursively, its parent first) without signals."""
        if sid in self._nodes:
            return
        parent_id = self._summaries[sid].get("parentSession")
        parent = self._root
        if parent_id in self._summaries and parent_id != sid and not self._is_below(parent_id, sid):
            self._attach(parent_id)
            parent = self._nodes[parent_id]
        node = self._new_node(sid, parent)
        parent.children.append(node)

    def _new_node(self, sid: str, parent: _Node) -> _Node:
        node = _Node(self._next_key, sid, parent)
        self._next_key += 1
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
            current = self._summaries.get(current, {}).get("parentSession")
        return False

    def upsert(self, summary: Json) -> QModelIndex:
        """A session appeared or changed: one row inserted, moved or updated."""
        sid = summary["id"]
        known = sid in self._nodes
        self._summaries[sid] = dict(summary)
        if not known:
            parent = self._placement(sid)
            row = self._slot(parent.children, sid)
            self.beginInsertRows(self._index_of(parent), row, row)
            node = self._new_node(sid, parent)
            parent.children.insert(row, node)
            self.endInsertRows()
            self._adopt_orphans(sid)
        else:
            node = self._nodes[sid]
            wanted = self._placement(sid)
            if wanted is not node.parent:
                self._move(node, wanted)
            else:
                self._reorder(node)
            self._changed(node)
        return self.index_for(sid)

    def remove(self, sid: str) -> None:
        node = self._nodes.get(sid)
        if node is None:
            return
        for child in list(node.children):
            self._move(child, self._root)
        parent = node.parent or self._root
        row = node.row()
        self.beginRemoveRows(self._index_of(parent), row, row)
        parent.children.pop(row)
        del self._nodes[sid]
        del self._by_key[node.key]
        del self._summaries[sid]
        self.endRemoveRows()

    def _placement(self, sid: str) -> _Node:
        parent_id = self._summaries[sid].get("parentSession")
        if parent_id in self._nodes and parent_id != sid and not self._is_below(parent_id, sid):
            return self._nodes[parent_id]
        return self._root

    def _adopt_orphans(self, sid: str) -> None:
        for child in [n for n in self._root.children if n.sid != sid]:
            if child.sid is not None and self._summaries[child.sid].get("parentSession") == sid:
                self._move(child, self._nodes[sid])

    def _move(self, node: _Node, new_parent: _Node) -> None:
        old_parent = node.parent or self._root
        row = node.row()
        dest = self._slot(new_parent.children, str(node.sid))
        if not self.beginMoveRows(
            self._index_of(old_parent), row, row, self._index_of(new_parent), dest
        ):
            log.warning("refused move of %s", node.sid)
            return
        old_parent.children.pop(row)
        node.parent = new_parent
        new_parent.children.insert(dest, node)
        self.endMoveRows()

    def _reorder(self, node: _Node) -> None:
        """Move `node` among its siblings to where its (changed) activity puts it."""
        parent = node.parent or self._root
        row = node.row()
        others = parent.children[:row] + parent.children[row + 1 :]
        slot = self._slot(others, str(node.sid))
        if slot == row:
            return
        dest = slot + 1 if slot > row else slot  # beginMoveRows counts in the old list
        parent_index = self._index_of(parent)
        if not self.beginMoveRows(parent_index, row, row, parent_index, dest):
            log.warning("refused reorder of %s", node.sid)
            return
        parent.children.pop(row)
        parent.children.insert(slot, node)
        self.endMoveRows()

    def _changed(self, node: _Node) -> None:
        parent = self._index_of(node.parent or self._root)
        row = node.row()
        self.dataChanged.emit(self.index(row, 0, parent), self.index(row, len(COLUMNS) - 1, parent)
        )

    # --- lookups ------------------------------------------------------------------

    def summary(self, sid: str) -> Json | None:
        return self._summaries.get(sid)

    def session_ids(self) -> list[str]:
        return list(self._summaries)

    def index_for(self, sid: str, column: int = 0) -> QModelIndex:
        node = self._nodes.get(sid)
        if node is None:
            return QModelIndex()
        return self.createIndex(node.row(), column, node.key)

    def parent_of(self, sid: str) -> str | None:
        """The session this row is shown beneath (None at the top level)."""
        node = self._nodes.get(sid)
        return node.parent.sid if node is not None and node.parent is not None else None

    def lineage_parents(self) -> list[str]:
        """Sessions with rows beneath them: what the tree expands once loaded."""
        return [sid for sid, node in self._nodes.items() if node.children]

    def children_of(self, sid: str | None) -> list[str]:
        node = self._root if sid is None else self._nodes.get(sid)
        return [c.sid for c in node.children if c.sid] if node is not None else []

    def _index_of(self, node: _Node) -> QModelIndex:
        if node is self._root:
            return QModelIndex()
        return self.createIndex(node.row(), 0, node.key)

    def _node(self, index: Index) -> _Node:
        if not index.isValid():
            return self._root
        return self._by_key.get(index.internalId(), self._root)

    # --- QAbstractItemModel -------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = NO_PARENT) -> QModelIndex:
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        node = self._node(parent)
        if row >= len(node.children):
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
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

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
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        node = self._by_key.get(index.internalId())
        summary = self._summaries.get(node.sid) if node is not None and node.sid else None
        return _ENABLED if summary is not None and not summary.get("error") else _DISABLED

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        try:
            node = self._by_key.get(index.internalId())
            if node is None or node.sid is None:
                return None
            return self._data(node.sid, self._summaries[node.sid], index.column(), role)
        except Exception:  # data() never raises: the row shows as a placeholder
            log.exception("session row %s failed to build", index.internalId())
            if role == Qt.ItemDataRole.DisplayRole and index.column() == TITLE:
                return "(this session could not be shown)"
            return None

    def _data(self, sid: str, s: Json, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == TITLE:
                if s.get("error"):
                    return f"{sid} — cannot be read"
                return s.get("title") or sid
            if column == ACTIVITY:
                return "● running" if s.get("running") else format_when(s.get("updated"))
            if column == MESSAGES:
                return str(s.get("messages", 0))
            if column == MODEL:
                return s.get("model") or ""
        elif role == Qt.ItemDataRole.DecorationRole and column == TITLE:
            return badge_icon(relation_of(s))
        elif role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(sid, s)
        elif role == Qt.ItemDataRole.AccessibleTextRole and column == TITLE:
            kind = {"fork": "fork", "subagent": "subagent"}.get(relation_of(s) or "", "session")
            state = ", running" if s.get("running") else ""
            return f"{kind} {s.get('title') or sid}{state}"
        elif role == Qt.ItemDataRole.TextAlignmentRole and column == MESSAGES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == ID_ROLE:
            return sid
        elif role == SUMMARY_ROLE:
            return s
        elif role == UPDATED_ROLE:
            return s.get("updated") or ""
        elif role == RELATION_ROLE:
            return relation_of(s)
        elif role == RUNNING_ROLE:
            return bool(s.get("running"))
        return None

    def _tooltip(self, sid: str, s: Json) -> str:
        lines = [s.get("title") or sid, f"id: {sid}"]
        parent = s.get("parentSession")
        if parent:
            parent_title = (self._summaries.get(parent) or {}).get("title") or parent
            verb = "Subagent started by" if relation_of(s) == "subagent" else "Forked from"
            lines.append(f"{verb} “{parent_title}” at event {s.get('seedLength', 0)}")
        if s.get("running"):
            lines.append("A turn is running")
        if s.get("error"):
            lines.append(f"Could not be read: {(s['error'] or {}).get('message', '')}")
        return "\n".join(lines)


def relation_of(summary: Json) -> str | None:
    rel = summary.get("relation")
    if rel is None and summary.get("parentSession"):
        return "fork"
    return rel if isinstance(rel, str) else None


def format_when(ts: object, now: datetime | None = None) -> str:
    """A short local time: today's time, or the date for older activity."""
    if not isinstance(ts, str) or not ts:
        return ""
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    local = when.astimezone()
    now = (now or datetime.now(UTC)).astimezone()
    if local.date() == now.date():
        return local.strftime("%H:%M")
    if local.year == now.year:
        return local.strftime("%d %b %H:%M")
    return local.strftime("%Y-%m-%d")


class SessionFilterProxy(QSortFilterProxyModel):
    """Sort by last activity (newest first) and filter by title or message text.

    Message text matches come from outside (`set_text_hits`: ids of sessions whose
    messages contain the pattern), because finding them needs the client. Sorting is
    passed on to the source model (see the module docstring); this proxy only filters."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pattern = ""
        self._text_hits: set[str] = set()
        self.setRecursiveFilteringEnabled(True)
        self.setAutoAcceptChildRows(False)
        self.setSortRole(UPDATED_ROLE)
        self.setDynamicSortFilter(True)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)

    @property
    def pattern(self) -> str:
        return self._pattern

    def set_pattern(self, text: str) -> None:
        self.beginFilterChange()
        self._pattern = text.strip().casefold()
        self._text_hits = set()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text_hits(self, pattern: str, hits: set[str]) -> None:
        if pattern.strip().casefold() != self._pattern:
            return  # an answer to an older pattern
        self.beginFilterChange()
        self._text_hits = set(hits)
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self._pattern:
            return True
        model = self.sourceModel()
        index = model.index(source_row, TITLE, source_parent)
        sid = model.data(index, ID_ROLE)
        title = str(model.data(index, Qt.ItemDataRole.DisplayRole) or "")
        return self._pattern in title.casefold() or sid in self._text_hits
