"""What the tree paints: a view's delegate asks a cell for all its roles in one
`multiData` call, which the model answers at once and the filter proxy passes through;
those answers must be what `data()` says role by role, through the filter too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QModelRoleData, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from forkwise.gui.models.session_filter import SessionFilterProxy
from forkwise.gui.models.session_model import SessionTreeModel
from forkwise.gui.models.session_rows import (
    ACTIVITY,
    COLUMNS,
    ID_ROLE,
    PAINT_ROLES,
    TITLE,
    format_when,
)

pytestmark = pytest.mark.gui

ROLES = [*PAINT_ROLES, int(Qt.ItemDataRole.ToolTipRole), int(Qt.ItemDataRole.AccessibleTextRole),
         int(Qt.ItemDataRole.SizeHintRole), ID_ROLE]


def summary(sid: str, parent: str | None = None, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": sid, "title": f"Session {sid}", "parentSession": parent, "seedLength": 2,
        "relation": "fork" if parent else None, "messages": 4, "model": "forkwise-offline",
        "created": f"2025-01-01T00:00:{len(sid):02d}.000Z", "updated": "2025-03-04T10:00:00Z",
        "running": False, "error": None,
    }
    out.update(kw)
    return out


def rows() -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    return [
        summary("plan", updated=now.isoformat()),  # today: a time
        summary("fork", "plan", title="Session plan"),  # called after its source
        summary("sub", "plan", relation="subagent", running=True),
        summary("wait", waiting=True, waitingTools=["read_file"]),
        summary("imp", source="claude", updated=(now - timedelta(days=400)).isoformat()),
        summary("bad", error={"message": "truncated"}),
        summary("odd", updated="not a time", messages=1234),
    ]


def comparable(value: Any) -> Any:
    return ("icon", value.cacheKey()) if isinstance(value, QIcon) else value


def cells(model: Any, parent: QModelIndex | None = None) -> list[QModelIndex]:
    parent = parent or QModelIndex()
    found = []
    for row in range(model.rowCount(parent)):
        for column in range(model.columnCount(parent)):
            found.append(model.index(row, column, parent))
        found += cells(model, model.index(row, 0, parent))
    return found


def asked_together(model: Any, index: QModelIndex, role: int) -> Any:
    slot = QModelRoleData(role)
    model.multiData(index, slot)
    return slot.data()


@pytest.mark.parametrize("pattern", ["", "plan"])
def test_cells_painted_say_what_data_says(qtmodeltester: Any, pattern: str) -> None:
    """Every role of every cell, through the filter proxy (with a filter, its rows are not
    the source's): `multiData` first on one model, `data` first on another."""
    models = []
    for _ in range(2):
        model = SessionTreeModel()
        model.load(rows())
        model.fetch_all()
        proxy = SessionFilterProxy()
        proxy.setSourceModel(model)
        proxy.set_pattern(pattern)
        qtmodeltester.check(proxy)
        models.append((model, proxy))
    (_, painted), (_, asked) = models
    painted_cells, asked_cells = cells(painted), cells(asked)
    # every column of each row (with the filter: plan and its fork)
    assert len(painted_cells) == len(asked_cells) == (7 if not pattern else 2) * len(COLUMNS)
    for p_index, a_index in zip(painted_cells, asked_cells, strict=True):
        together = [comparable(asked_together(painted, p_index, role)) for role in ROLES]
        one_by_one = [comparable(asked.data(a_index, role)) for role in ROLES]
        assert together == one_by_one, (p_index.data(ID_ROLE), p_index.column())
        again = [comparable(painted.data(p_index, role)) for role in ROLES]
        assert again == one_by_one


def test_delegate_paints_the_rows_answers() -> None:
    """A view's delegate fills its option from one multiData call: the text, the icon and
    the alignment of each cell are the model's."""
    model = SessionTreeModel()
    model.load(rows())
    model.fetch_all()
    proxy = SessionFilterProxy()
    proxy.setSourceModel(model)
    delegate = QStyledItemDelegate()
    seen = {}
    for index in cells(proxy):
        option = QStyleOptionViewItem()
        delegate.initStyleOption(option, index)
        sid, column = index.data(ID_ROLE), index.column()
        assert option.text == (index.data() or "")
        assert option.icon.isNull() == (index.data(Qt.ItemDataRole.DecorationRole) is None)
        alignment = index.data(Qt.ItemDataRole.TextAlignmentRole)
        if alignment is not None:
            assert option.displayAlignment == Qt.AlignmentFlag(alignment)
        seen[sid, column] = option.text
    assert seen["fork", TITLE] == "Session plan — fork 1"
    assert seen["wait", ACTIVITY] == "⚑ to approve"
    assert seen["sub", ACTIVITY] == "● running"
    assert seen["bad", TITLE] == "bad — cannot be read"
    assert seen["odd", ACTIVITY] == "not a time"


def test_times_written_as_datetime_writes_them() -> None:
    """`format_when` with the tree's `today` writes what `datetime.strftime` writes: one
    format with the time, today's and an earlier year's included (the year then)."""
    now = datetime.now().astimezone()
    today = now.date()
    for when in (now, now - timedelta(days=40), now - timedelta(days=800), now.replace(hour=0)):
        ts = when.astimezone(UTC).isoformat().replace("+00:00", "Z")
        local = when.astimezone()
        if local.year == today.year:
            expected = local.strftime("%d %b %H:%M")
        else:
            expected = local.strftime("%d %b %Y %H:%M")
        assert format_when(ts, today=today) == expected
        assert format_when(ts) == expected
    earlier = datetime(2025, 3, 4, 10, 0, tzinfo=UTC)
    assert format_when(earlier.isoformat(), today=today.replace(year=2026)) \
        == earlier.astimezone().strftime("%d %b 2025 %H:%M")
    assert format_when("2025-03-04T10:00:00", today=today.replace(year=2025)) != "2025-03-04"
