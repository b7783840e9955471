"""The lineage tree model: row-level changes, never a reset after the first load."""

from __future__ import annotations

from typing import Any

import pytest
from gui_harness import expected_tree, model_tree
from PySide6.QtCore import Qt

from forkwise.gui.session_model import (
    ID_ROLE,
    RELATION_ROLE,
    SessionFilterProxy,
    SessionTreeModel,
)

pytestmark = pytest.mark.gui


def summary(sid: str, parent: str | None = None, relation: str | None = None, **kw: Any) -> dict[str, Any]:
    out = {
        "id": sid,
        "title": kw.pop("title", f"Session {sid}"),
        "parentSession": parent,
        "seedLength": 3 if parent else 0,
        "relation": relation or ("fork" if parent else None),
        "events": 5,
        "turns": 1,
        "messages": 2,
        "created": kw.pop("created", f"2025-01-01T00:00:0{len(sid) % 10}.000Z"),
        "updated": kw.pop("updated", "2025-01-01T10:00:00.000Z"),
        "running": False,
        "model": "forkwise-offline",
        "provider": "offline",
        "cwd": "",
        "error": None,
    }
    out.update(kw)
    return out


@pytest.fixture
def tree(qtmodeltester: Any) -> SessionTreeModel:
    model = SessionTreeModel()
    model.load([summary("a"), summary("b", "a"), summary("c", "b"), summary("s", "a", "subagent")])
    qtmodeltester.check(model)
    return model


def test_load_groups_by_lineage(tree: SessionTreeModel) -> None:
    assert model_tree(tree) == {"a": {"b": {"c": {}}, "s": {}}}
    assert tree.data(tree.index_for("s"), RELATION_ROLE) == "subagent"
    assert tree.data(tree.index_for("b"), RELATION_ROLE) == "fork"
    assert "Subagent started by" in tree.data(tree.index_for("s"), Qt.ItemDataRole.ToolTipRole)
    assert "Forked from" in tree.data(tree.index_for("b"), Qt.ItemDataRole.ToolTipRole)


def test_fork_is_one_row_insert_not_a_reset(tree: SessionTreeModel, qtmodeltester: Any, qtbot: Any) -> None:
    resets: list[int] = []
    inserted: list[tuple[str | None, int, int]] = []
    tree.modelReset.connect(lambda: resets.append(1))
    tree.rowsInserted.connect(
        lambda parent, first, last: inserted.append((tree.data(parent, ID_ROLE), first, last))
    )
    index = tree.upsert(summary("d", "b"))
    assert resets == []
    assert inserted == [("b", 1, 1)]
    assert index.isValid()
    assert tree.parent_of("d") == "b"
    catalogue = {s: tree.summary(s) for s in tree.session_ids()}
    assert model_tree(tree) == expected_tree(catalogue)
    qtmodeltester.check(tree)


def test_update_is_data_changed(tree: SessionTreeModel, qtmodeltester: Any) -> None:
    changed: list[str] = []
    tree.dataChanged.connect(lambda tl, br, roles=(): changed.append(tree.data(tl, ID_ROLE)))
    tree.upsert(summary("b", "a", title="Renamed", running=True))
    assert changed == ["b"]
    assert tree.data(tree.index_for("b")) == "Renamed"
    assert tree.data(tree.index_for("b", 1)) == "● running"
    qtmodeltester.check(tree)


def test_orphan_moves_beneath_parent_when_it_arrives(qtmodeltester: Any) -> None:
    model = SessionTreeModel()
    qtmodeltester.check(model)
    model.upsert(summary("child", "late"))
    assert model_tree(model) == {"child": {}}
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.upsert(summary("late"))
    assert model_tree(model) == {"late": {"child": {}}}
    assert resets == []
    qtmodeltester.check(model)


def test_remove_keeps_children(tree: SessionTreeModel, qtmodeltester: Any) -> None:
    tree.remove("b")
    catalogue = {s: tree.summary(s) for s in tree.session_ids()}
    assert model_tree(tree) == expected_tree(catalogue) == {"a": {"s": {}}, "c": {}}
    qtmodeltester.check(tree)


def test_random_changes_match_catalogue(qtmodeltester: Any) -> None:
    import random

    rng = random.Random(4)
    model = SessionTreeModel()
    catalogue: dict[str, dict[str, Any]] = {}
    for step in range(120):
        op = rng.random()
        if op < 0.6 or not catalogue:
            sid = f"s{step}"
            parent = rng.choice([None, *catalogue, "ghost"])
            catalogue[sid] = summary(sid, parent)
            model.upsert(catalogue[sid])
        elif op < 0.8:
            sid = rng.choice(list(catalogue))
            catalogue[sid] = dict(catalogue[sid], messages=step)
            model.upsert(catalogue[sid])
        else:
            sid = rng.choice(list(catalogue))
            del catalogue[sid]
            model.remove(sid)
        assert model_tree(model) == expected_tree(catalogue), step
    qtmodeltester.check(model)


def test_proxy_sorts_by_activity_and_filters(tree: SessionTreeModel, qtmodeltester: Any) -> None:
    tree.upsert(summary("z", updated="2025-02-01T00:00:00.000Z", title="Zebra notes"))
    proxy = SessionFilterProxy()
    proxy.setSourceModel(tree)
    proxy.sort(1, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(proxy)
    assert model_tree(proxy) == {"z": {}, "a": {"b": {"c": {}}, "s": {}}}
    proxy.set_pattern("zebra")
    assert model_tree(proxy) == {"z": {}}
    proxy.set_pattern("session c")
    assert model_tree(proxy) == {"a": {"b": {"c": {}}}}
    proxy.set_text_hits("session c", {"s"})
    assert model_tree(proxy) == {"a": {"b": {"c": {}}, "s": {}}}
    proxy.set_text_hits("older pattern", {"z"})
    assert "z" not in model_tree(proxy)
    tree.upsert(summary("zz", "c", title="session c again"))
    assert model_tree(proxy) == {"a": {"b": {"c": {"zz": {}}}, "s": {}}}
    qtmodeltester.check(proxy)


def test_rows_keep_activity_order_through_changes(qtmodeltester: Any) -> None:
    """The source model sorts (the proxy passes its sort on): inserts land in place and a
    row whose activity changes moves, with row-level signals only."""
    model = SessionTreeModel()
    proxy = SessionFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(1, Qt.SortOrder.DescendingOrder)
    model.load([summary("a", updated="2025-01-01T01:00:00Z"),
                summary("b", updated="2025-01-01T03:00:00Z"),
                summary("c", updated="2025-01-01T02:00:00Z")])
    qtmodeltester.check(proxy)

    def order() -> list[str]:
        return [proxy.index(r, 0).data(ID_ROLE) for r in range(proxy.rowCount())]

    assert order() == ["b", "c", "a"]
    model.upsert(summary("d", updated="2025-01-01T02:30:00Z"))
    assert order() == ["b", "d", "c", "a"]
    model.upsert(summary("a", updated="2025-01-01T09:00:00Z"))
    assert order() == ["a", "b", "d", "c"]
    model.upsert(summary("b", updated="2025-01-01T00:00:00Z"))
    assert order() == ["a", "d", "c", "b"]
    model.upsert(summary("x", "d", updated="2025-01-01T05:00:00Z"))
    model.upsert(summary("y", "d", updated="2025-01-01T06:00:00Z"))
    assert model.children_of("d") == ["y", "x"]
    proxy.sort(1, Qt.SortOrder.AscendingOrder)
    assert order() == ["b", "c", "d", "a"]
    assert model.children_of("d") == ["x", "y"]
    qtmodeltester.check(proxy)
