"""The lineage tree: sessions grouped by where they came from (forks and subagents).

Holds ids and summary dicts from the client catalogue; what a row shows is in session_rows;
the tree's nodes, the rows handed to views a page at a time and the indexes, counts and
flags views ask of every row are in session_lineage. Changes arrive row by row (`upsert`,
`remove`); only the first load resets the model. A child whose parent is not known yet
waits at the top level and is moved beneath its parent when that arrives.

The model keeps its rows in the order of the column sorted on itself (`sort`; the filter
proxy passes its sort on to it): a QSortFilterProxyModel sorting 10,000 rows calls `data()`
from C++ about 300,000 times, 1.5 s at load, where a Python sort by key takes milliseconds.
Every level is sorted the same way; rows equal in that column follow their last activity.

A view paints a cell after asking it for seven roles in one `multiData` call (Qt's
QStyledItemDelegate); answered here (and passed through by the filter proxy) it is one
Python call a cell. Left to Qt's default, each role was a `data()` call and, through the
proxy, an `index()` call too: ~1,700 calls from C++ into Python a page-down, 4 of its 6 ms
of CPU (the same view over a C++ model paints a page in 2.1 ms). Answers are kept per cell
until any row changes (a change can rename another row: a fork is called after its source).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QModelIndex, QModelRoleData, QModelRoleDataSpan, QObject, Qt, Signal

from forkwise.gui.models.session_costs import (
    lineage_line,
    lineage_total,
    own_part,
    token_count,
)
from forkwise.gui.models.session_lineage import ROOT_KEY, Index, Node, SessionLineage
from forkwise.gui.models.session_rows import (
    ANSWERED_ROLES,
    COLUMNS,
    COST,
    PAINT_ROLES,
    TITLE,
    SortKey,
    painted,
    row_data,
    sort_key,
)

log = logging.getLogger(__name__)

_COLUMN_COUNT = len(COLUMNS)
_PAINT_AT = {role: at for at, role in enumerate(PAINT_ROLES)}
_UNPAINTED = (None,) * len(PAINT_ROLES)

PAGE_ROWS = 200  # top-level rows per fetch: a few screens
CELLS_KEPT = 20_000  # cached data() answers: the titles and ids a filter reads
#: cells whose painted roles are kept: ~70 pages of scrolling (~1.6 MB)
PAINTED_KEPT = 8_000
#: more changed rows than this in `merge`: one reset is cheaper than that many upserts
MERGE_ROWS = 200


class SessionTreeModel(SessionLineage):
    """Summary dicts (the client API's shape) as a tree of lineage.

    Signals: `rowsFetched(first, last)` (see SessionLineage); `foldersDiffer(first, cwd)`
    (see there)."""

    #: a session arrived from another working folder (`cwd`) than the rows' (`first`, that of
    #: the first row): the sessions come from several folders now (the window may show the
    #: Folder column, named by both)
    foldersDiffer = Signal(str, str)

    def __init__(self, parent: QObject | None = None, *, page_rows: int | None = None) -> None:
        super().__init__(parent, PAGE_ROWS if page_rows is None else page_rows)
        #: (column, descending) rows are kept in; None: in arrival order (never sorted)
        self._order: tuple[int, bool] | None = None
        #: what `data` answered, by (row key, column, role); any change clears it
        self._cells: dict[tuple[int, int, int], Any] = {}
        #: what cells answered to `PAINT_ROLES` (in that order), by `row key * columns +
        #: column`: a view asks them of each visible cell at every paint; cleared with it
        self._painted: dict[int, tuple[Any, ...]] = {}
        self._cells_until = 0.0  # both are kept until midnight (times show as dates)
        self._today = date.today()  # the local date they were answered on

    # --- changes: whole listings --------------------------------------------------

    def load(self, summaries: Iterable[Mapping[str, Any]]) -> None:
        """The first full load (the only reset this model does). The rows are kept as
        they are, not copied: the caller changes none of them afterwards (the client's
        catalogue replaces a changed row, it never edits one)."""
        self.beginResetModel()
        self._forget_cells()
        self._root.children.clear()
        self._nodes.clear()
        self._by_key = {ROOT_KEY: self._root}
        self._broken = set()
        from forkwise.core.client.rows import session_row  # (not on the first frame's path)

        items = sorted((session_row(s) for s in summaries), key=lambda s: s["created"] or "")
        # the rows as given, not copies: at 100,000 sessions a copy of each was 115 MB
        # (tracemalloc) beside the client catalogue's own; `upsert` replaces a row whole
        self._summaries = {summary["id"]: summary for summary in items}
        root, nodes = self._root, self._nodes
        for summary in items:  # inline for the common case: a top-level row (10,000 at start)
            sid = summary["id"]
            if sid in nodes:
                continue
            if summary["parentSession"] is None:
                root.children.append(self._new_node(sid, root))
            else:
                self._attach(sid)
        self._sort_children(self._root)
        self._shown = min(self.page_rows, len(self._root.children))
        self.endResetModel()

    def merge(self, summaries: Iterable[Mapping[str, Any]]) -> None:
        """The full listing over rows already loaded (a preview from the store's index):
        rows that differ are updated, new ones inserted, missing ones removed — row by
        row, so that selection, expansion and scrolling stay; with many changes, a load."""
        from forkwise.core.client.rows import session_row

        wanted = {s["id"]: s for s in map(session_row, summaries)}
        changed = [s for sid, s in wanted.items() if self._summaries.get(sid) != s]
        gone = [sid for sid in self._summaries if sid not in wanted]
        if len(changed) + len(gone) > MERGE_ROWS:
            self.load(wanted.values())
            return
        for sid in gone:
            self.remove(sid)
        for summary in changed:
            self.upsert(summary)

    def set_usage(self, parts: Mapping[str, Mapping[str, Any]]) -> None:
        """Each session's `usage` ({"own": …}, as the host lists it) into its row: the Cost
        column and the tooltips (a lineage's total is its root's) show it."""
        from forkwise.core.client.reports import row_usage
        from forkwise.core.client.rows import session_row

        changed: list[Node] = []
        for sid, usage in parts.items():
            summary = self._summaries.get(sid)
            if summary is None or ("usage" in summary and summary["usage"] == usage):
                continue
            given = row_usage(usage)
            shown = token_count(own_part(summary)) or token_count(given and given["own"])
            self._summaries[sid] = session_row({**summary, "usage": dict(usage)})
            if shown:  # (no tokens before or now: the row shows the same, nothing to paint)
                changed.append(self._nodes[sid])
        if not changed:
            return
        self._forget_cells()
        if self._order is not None and self._order[0] == COST:
            order = self._order
            self._order = None  # sorted again on the new costs
            self.sort(order[0], Qt.SortOrder.DescendingOrder if order[1]
                      else Qt.SortOrder.AscendingOrder)
        for node in changed:
            above: Node | None = node
            while above is not None and above.sid is not None:
                self._changed(above)  # its cost, and its lineage's total above it
                above = above.parent

    def lineage_line(self, sid: str) -> str | None:
        """The tooltip line of a session with forks or subagents: its lineage's total."""
        node = self._nodes.get(sid)
        if node is None or not node.children:
            return None
        parts = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current.sid is not None:
                parts.append(own_part(self._summaries[current.sid]))
            stack.extend(current.children)
        return lineage_line(lineage_total(parts), len(parts))

    # --- order --------------------------------------------------------------------

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Every level by `column` (`sort_key`); rows whose value changes later move to
        their place (`upsert`)."""
        wanted = (column, order == Qt.SortOrder.DescendingOrder)
        if not 0 <= column < len(COLUMNS) or wanted == self._order:
            return
        self.layoutAboutToBeChanged.emit()
        self._order = wanted
        self._sort_children(self._root)
        old = self.persistentIndexList()
        new = []
        for index in old:
            node = self._by_key.get(index.internalId())
            if node is None or node.parent is None or not self._has_row(node):
                new.append(QModelIndex())
            else:
                new.append(self.createIndex(node.row(), index.column(), node.key))
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    @property
    def sort_order(self) -> tuple[int, Qt.SortOrder] | None:
        """The column rows are sorted on and its order (None: never sorted)."""
        if self._order is None:
            return None
        column, descending = self._order
        return column, Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder

    def _key(self, node: Node) -> SortKey:
        if self._order is None or node.sid is None:
            return ()
        return sort_key(self._order[0], node.sid, self._summaries[node.sid])

    def _sort_children(self, node: Node) -> None:
        if self._order is None:
            return
        column, descending = self._order
        summaries = self._summaries

        def key(n: Node) -> SortKey:  # _key, inlined: it runs for every row
            return sort_key(column, n.sid, summaries[n.sid]) if n.sid else ()

        stack = [node]
        while stack:
            current = stack.pop()
            current.children.sort(key=key, reverse=descending)
            stack.extend(c for c in current.children if c.children)

    def _slot(self, siblings: Sequence[Node], sid: str) -> int:
        """Where `sid` goes among `siblings` (not containing it) in the current order."""
        if self._order is None:
            return len(siblings)
        column, descending = self._order
        key = sort_key(column, sid, self._summaries[sid])
        for row, other in enumerate(siblings):
            theirs = self._key(other)
            if (theirs < key) if descending else (theirs > key):
                return row
        return len(siblings)

    # --- changes, row by row ------------------------------------------------------

    def upsert(self, data: Mapping[str, Any]) -> QModelIndex:
        """A session appeared or changed: one row inserted, moved or updated."""
        from forkwise.core.client.rows import session_row

        summary = session_row(data)
        sid = summary["id"]
        known = sid in self._nodes
        if known and "usage" not in summary and "usage" in self._summaries[sid]:
            # a row as the catalogue sends it: its cost stays until `set_usage` renews it
            summary = session_row({**summary, "usage": self._summaries[sid]["usage"]})
        if known and self._summaries[sid] == summary:
            # told twice (a fork's answer and the host's notification of it): once is in
            return self.index_for(sid)
        self._forget_cells()  # a title or a fork's number elsewhere may change with it
        retitled = known and self._summaries[sid]["title"] != summary["title"]
        if not known and self._summaries:  # any row tells: one folder or several already
            other = next(iter(self._summaries.values()))
            first, cwd = str(other["cwd"] or ""), str(summary["cwd"] or "")
            if first != cwd:
                self.foldersDiffer.emit(first, cwd)
        self._summaries[sid] = session_row(dict(summary))  # a copy: the caller's is theirs
        if known:
            key = self._nodes[sid].key
            if summary["error"]:
                self._broken.add(key)
            else:
                self._broken.discard(key)
        if not known:
            parent = self._placement(sid)
            row = self._slot(parent.children, sid)
            self._insert(parent, row, self._new_node(sid, parent))
            self._adopt_orphans(sid)
        else:
            node = self._nodes[sid]
            wanted = self._placement(sid)
            if wanted is not node.parent:
                self._move(node, wanted)
            else:
                self._reorder(node)
            self._changed(node)
            if retitled:  # forks not renamed yet are called after their source
                for child in node.children:
                    self._changed(child)
        return self.index_for(sid)

    def remove(self, sid: str) -> None:
        node = self._nodes.get(sid)
        if node is None:
            return
        self._forget_cells()
        for child in list(node.children):
            self._move(child, self._root)
        self._detach(node)
        del self._nodes[sid]
        del self._by_key[node.key]
        del self._summaries[sid]
        self._broken.discard(node.key)

    def _insert(self, parent: Node, row: int, node: Node) -> None:
        """`node` into `parent` at `row`, announced if views are to see it."""
        node.parent = parent
        if not self._insert_shown(parent, row):
            parent.children.insert(row, node)
            return
        self.beginInsertRows(self._index_of(parent), row, row)
        parent.children.insert(row, node)
        if parent is self._root:
            self._shown += 1
        self.endInsertRows()

    def _detach(self, node: Node) -> None:
        """`node` out of its parent, announced if views know it."""
        parent = node.parent or self._root
        row = node.row()
        if not self._row_shown(parent, row):
            parent.children.pop(row)
            return
        self.beginRemoveRows(self._index_of(parent), row, row)
        parent.children.pop(row)
        if parent is self._root:
            self._shown -= 1
        self.endRemoveRows()

    def _adopt_orphans(self, sid: str) -> None:
        for child in [n for n in self._root.children if n.sid != sid]:
            if child.sid is not None and self._summaries[child.sid]["parentSession"] == sid:
                self._move(child, self._nodes[sid])

    def _move(self, node: Node, new_parent: Node) -> None:
        old_parent = node.parent or self._root
        row = node.row()
        dest = self._slot(new_parent.children, str(node.sid))
        if not (self._row_shown(old_parent, row) and self._insert_shown(new_parent, dest)):
            # a side views do not know: a removal and an insertion, each announced if seen
            self._detach(node)
            self._insert(new_parent, self._slot(new_parent.children, str(node.sid)), node)
            return
        if not self.beginMoveRows(
            self._index_of(old_parent), row, row, self._index_of(new_parent), dest
        ):
            log.warning("refused move of %s", node.sid)
            return
        old_parent.children.pop(row)
        node.parent = new_parent
        new_parent.children.insert(dest, node)
        if old_parent is self._root:
            self._shown -= 1
        if new_parent is self._root:
            self._shown += 1
        self.endMoveRows()

    def _reorder(self, node: Node) -> None:
        """Move `node` among its siblings to where its (changed) activity puts it."""
        parent = node.parent or self._root
        row = node.row()
        others = parent.children[:row] + parent.children[row + 1 :]
        slot = self._slot(others, str(node.sid))
        if slot == row:
            return
        if parent is self._root and not (row < self._shown and slot < self._shown):
            # into or out of the rows not fetched yet (or within them)
            self._detach(node)
            self._insert(parent, slot, node)
            return
        if not self._has_row(parent):
            parent.children.pop(row)
            parent.children.insert(slot, node)
            return
        dest = slot + 1 if slot > row else slot  # beginMoveRows counts in the old list
        parent_index = self._index_of(parent)
        if not self.beginMoveRows(parent_index, row, row, parent_index, dest):
            log.warning("refused reorder of %s", node.sid)
            return
        parent.children.pop(row)
        parent.children.insert(slot, node)
        self.endMoveRows()

    def set_question(self, sid: str, question: str) -> None:
        """The first question fork `sid` asked of its own (read from its log by the
        branches feature): its row is named after it."""
        if self.questions.get(sid) == question:
            return
        self.questions[sid] = question
        node = self._nodes.get(sid)
        if node is not None:
            self._changed(node)

    def _changed(self, node: Node) -> None:
        if not self._has_row(node):
            return
        parent = self._index_of(node.parent or self._root)
        row = node.row()
        self.dataChanged.emit(self.index(row, 0, parent), self.index(row, len(COLUMNS) - 1, parent)
        )

    # --- what cells answer --------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in ANSWERED_ROLES or not index.isValid():
            return None
        if time.time() >= self._cells_until:
            self._forget_cells()  # the day changed: times show as dates
        cell = (index.internalId(), index.column(), role)
        try:
            return self._cells[cell]
        except KeyError:
            pass
        value = self._data(index, role)
        if len(self._cells) >= CELLS_KEPT:
            self._cells.clear()
        self._cells[cell] = value
        return value

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role of `roleDataSpan` at once (a delegate asks `PAINT_ROLES` to paint a
        cell); other roles as `data` answers them."""
        # (a sequence of QModelRoleData, which PySide's stubs do not say)
        span: Any = roleDataSpan
        if not isinstance(span, QModelRoleDataSpan):  # one role (PySide's other overload)
            span = QModelRoleDataSpan(span)
        if not index.isValid():
            for i in range(len(span)):
                span[i].clearData()
            return
        if time.time() >= self._cells_until:
            self._forget_cells()
        key = index.internalId() * _COLUMN_COUNT + index.column()
        values = self._painted.get(key)
        if values is None:
            if len(self._painted) >= PAINTED_KEPT:
                self._painted.clear()
            values = self._painted[key] = self._paint(index)
        for i in range(len(span)):
            slot = span[i]
            role = slot.role()
            at = _PAINT_AT.get(role)
            value = values[at] if at is not None else self.data(index, role)
            if value is None:
                slot.clearData()
            else:
                slot.setData(value)

    def _forget_cells(self) -> None:
        """Rows changed (or the day did: times show as dates): every cell is asked again."""
        self._cells.clear()
        self._painted.clear()
        now = datetime.now().astimezone()
        self._today = now.date()
        midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        self._cells_until = midnight.timestamp()

    def _paint(self, index: Index) -> tuple[Any, ...]:
        """A cell's answers to `PAINT_ROLES` (`_data`'s, all at once)."""
        try:
            node = self._by_key.get(index.internalId())
            if node is None or node.sid is None:
                return _UNPAINTED
            summary = self._summaries[node.sid]
            return painted(node.sid, summary, index.column(), self._title_of, self._today,
                           parent_here=self._parent_here(summary))
        except Exception:  # as `_data` answers: a placeholder title, logged
            return tuple(self._data(index, role) if role in ANSWERED_ROLES else None
                         for role in PAINT_ROLES)

    def _parent_here(self, summary: Mapping[str, Any]) -> bool:
        """Whether the session's parent (if it has one) is in the list."""
        parent = summary["parentSession"]
        return parent is None or parent in self._summaries

    def _data(self, index: Index, role: int) -> Any:
        try:
            node = self._by_key.get(index.internalId())
            if node is None or node.sid is None:
                return None
            summary = self._summaries[node.sid]
            value = row_data(node.sid, summary, index.column(), role, self._title_of,
                             today=self._today, parent_here=self._parent_here(summary))
            if role == Qt.ItemDataRole.ToolTipRole and node.children:
                line = self.lineage_line(node.sid)
                return value if line is None else f"{value}\n{line}"
            return value
        except Exception:  # data() never raises: the row shows as a placeholder
            log.exception("session row %s failed to build", index.internalId())
            if role == Qt.ItemDataRole.DisplayRole and index.column() == TITLE:
                return "(this session could not be shown)"
            return None
