"""The lineage tree model: row-level changes, never a reset after the first load."""

from __future__ import annotations

from typing import Any

import pytest
from gui_harness import expected_tree, model_tree
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from forkwise.gui.models.session_filter import SessionFilterProxy
from forkwise.gui.models.session_model import SessionTreeModel
from forkwise.gui.models.session_rows import COLUMNS, ID_ROLE, MESSAGES, MODEL, RELATION_ROLE, TITLE

pytestmark = pytest.mark.gui
NO_INDEX = QModelIndex()


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
    # the row, then its children: a fork not renamed yet is called after its source
    assert changed == ["b", *tree.children_of("b")]
    assert tree.children_of("b")
    changed.clear()
    tree.upsert(summary("b", "a", title="Renamed", running=False))
    assert changed == ["b"]  # the same title: the children are not touched
    tree.upsert(summary("b", "a", title="Renamed", running=True))
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


def top_rows(model: Any) -> list[str]:
    return [model.data(model.index(r, 0), ID_ROLE) for r in range(model.rowCount())]


def test_top_level_rows_come_a_page_at_a_time(qtmodeltester: Any) -> None:
    model = SessionTreeModel(page_rows=4)
    model.sort(1, Qt.SortOrder.DescendingOrder)
    model.load([summary(f"s{i}", updated=f"2025-01-01T10:00:{i:02d}.000Z") for i in range(10)]
               + [summary("kid", "s0", updated="2025-01-02T00:00:00.000Z")])
    fetched: list[tuple[int, int]] = []
    model.rowsFetched.connect(lambda first, last: fetched.append((first, last)))
    assert top_rows(model) == ["s9", "s8", "s7", "s6"]
    assert model.canFetchMore(NO_INDEX)
    assert not model.index_for("s0").isValid()  # not handed to views yet
    assert model.lineage_parents() == []
    model.fetchMore(NO_INDEX)
    assert model.rowCount() == 8
    assert fetched == [(4, 7)]
    index = model.reveal("kid")  # down to its top-level row
    assert index.isValid()
    assert model.data(index, ID_ROLE) == "kid"
    assert top_rows(model)[-1] == "s0"
    assert fetched[-1] == (8, 9)
    assert not model.canFetchMore(NO_INDEX)
    assert model.lineage_parents(9, 9) == ["s0"]
    qtmodeltester.check(model)


class SignalMirror:
    """The tree as a view knows it: built from the model once, then changed only by the
    model's row signals (each checked against what the view knows)."""

    def __init__(self, model: SessionTreeModel) -> None:
        self.model = model
        self.kids: dict[str | None, list[str]] = {}
        self.rebuild()
        model.rowsInserted.connect(self.inserted)
        model.rowsAboutToBeRemoved.connect(self.removing)
        model.rowsAboutToBeMoved.connect(self.moving)
        model.layoutChanged.connect(self.rebuild)
        model.modelReset.connect(self.rebuild)

    def _sid(self, index: QModelIndex) -> str | None:
        return self.model.data(index, ID_ROLE) if index.isValid() else None

    def _read(self, parent: QModelIndex) -> None:
        sid = self._sid(parent)
        self.kids[sid] = []
        for row in range(self.model.rowCount(parent)):
            child = self.model.index(row, 0, parent)
            self.kids[sid].append(self._sid(child))
            self._read(child)

    def rebuild(self, *_args: Any) -> None:
        self.kids = {}
        self._read(NO_INDEX)

    def inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        kids = self.kids[self._sid(parent)]
        assert 0 <= first <= len(kids), (first, len(kids))
        for row in range(first, last + 1):
            child = self.model.index(row, 0, parent)
            kids.insert(row, self._sid(child))
            self._read(child)

    def _forget(self, sid: str | None) -> None:
        for child in self.kids.pop(sid, []):
            self._forget(child)

    def removing(self, parent: QModelIndex, first: int, last: int) -> None:
        kids = self.kids[self._sid(parent)]
        assert 0 <= first <= last < len(kids), (first, last, len(kids))
        for sid in kids[first:last + 1]:
            self._forget(sid)
        del kids[first:last + 1]

    def moving(self, src: QModelIndex, first: int, last: int, dst: QModelIndex, row: int) -> None:
        source, target = self.kids[self._sid(src)], self.kids[self._sid(dst)]
        assert 0 <= first <= last < len(source), (first, last, len(source))
        assert 0 <= row <= len(target), (row, len(target))
        moved = source[first:last + 1]
        del source[first:last + 1]
        if source is target and row > last:
            row -= len(moved)
        target[row:row] = moved

    def tree(self, sid: str | None = None) -> dict[str, Any]:
        return {kid: self.tree(kid) for kid in self.kids[sid]}


def test_paged_model_matches_the_whole_tree_through_random_changes(qtmodeltester: Any) -> None:
    """Inserts, moves, reorders and removals on both sides of the fetched rows: what views
    see is always the start of the whole tree, and the row signals say exactly that (a
    mirror follows them; persistent indexes move with their rows)."""
    import random

    from PySide6.QtCore import QPersistentModelIndex

    rng = random.Random(11)
    paged, whole = SessionTreeModel(page_rows=3), SessionTreeModel(page_rows=10**9)
    for model in (paged, whole):
        model.sort(1, Qt.SortOrder.DescendingOrder)
    catalogue: dict[str, dict[str, Any]] = {}

    def when() -> str:
        return f"2025-01-01T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00.000Z"

    for i in range(40):  # only a load leaves rows unfetched
        catalogue[f"l{i}"] = summary(f"l{i}", rng.choice([None, None, *catalogue]),
                                     updated=when())
    for model in (paged, whole):
        model.load(catalogue.values())
    mirror = SignalMirror(paged)
    pinned: dict[str, QPersistentModelIndex] = {}

    def pin_shown(parent: QModelIndex = NO_INDEX) -> None:
        for row in range(paged.rowCount(parent)):
            index = paged.index(row, 0, parent)
            pinned.setdefault(paged.data(index, ID_ROLE), QPersistentModelIndex(index))
            pin_shown(index)

    hidden_steps = 0
    for step in range(400):
        op = rng.random()
        sid = ""
        if op < 0.45:
            sid = f"s{step}"
            parent = rng.choice([None, None, *catalogue, "ghost"])
            catalogue[sid] = summary(sid, parent, updated=when())
        elif op < 0.8 and catalogue:
            sid = rng.choice(list(catalogue))
            catalogue[sid] = dict(catalogue[sid], updated=when(), messages=step)
        elif op < 0.95 and catalogue:
            gone = rng.choice(list(catalogue))
            del catalogue[gone]
            for model in (paged, whole):
                model.remove(gone)
        elif op < 0.97:
            paged.fetchMore(NO_INDEX)
        else:  # a header clicked: any column and order (the fetched rows stay as many)
            column, order = rng.randrange(len(COLUMNS)), rng.choice(list(Qt.SortOrder))
            for model in (paged, whole):
                model.sort(column, order)
        if sid:
            for model in (paged, whole):
                model.upsert(catalogue[sid])
        shown = paged.rowCount()
        hidden_steps += shown < whole.rowCount()
        seen = model_tree(paged)
        assert list(seen.items()) == list(model_tree(whole).items())[:shown], step
        assert mirror.tree() == seen, step
        assert list(mirror.tree()) == list(seen), step
        for pinned_sid, index in list(pinned.items()):
            if index.isValid():  # moved along with its row
                assert paged.data(index, ID_ROLE) == pinned_sid, step
                assert paged.index_for(pinned_sid) == QModelIndex(index), step
            else:  # its row was removed from the views (deleted, or moved out of the page)
                del pinned[pinned_sid]
        pin_shown()
    assert hidden_steps > 100  # many steps had rows the views did not know yet
    paged.fetch_all()
    assert model_tree(paged) == model_tree(whole) == expected_tree(catalogue)
    assert list(model_tree(paged)) == list(model_tree(whole))
    assert mirror.tree() == model_tree(paged)
    qtmodeltester.check(paged)


def test_every_column_sorts_its_rows_and_keeps_them_sorted(qtmodeltester: Any) -> None:
    model = SessionTreeModel()
    proxy = SessionFilterProxy()
    proxy.setSourceModel(model)
    model.load([
        summary("a", title="banana", messages=3, model="gpt-b", updated="2025-01-01T01:00:00Z"),
        summary("b", title="Apple", messages=10, model="gpt-a", updated="2025-01-01T02:00:00Z"),
        summary("c", title="cherry", messages=1, model="gpt-a", updated="2025-01-01T03:00:00Z"),
        summary("k2", "a", title="zed", messages=2, updated="2025-01-01T04:00:00Z"),
        summary("k1", "a", title="alpha", messages=5, updated="2025-01-01T05:00:00Z"),
    ])

    def order() -> list[str]:
        return [proxy.index(r, 0).data(ID_ROLE) for r in range(proxy.rowCount())]

    proxy.sort(TITLE, Qt.SortOrder.AscendingOrder)
    assert order() == ["b", "a", "c"]  # case-blind
    assert model.children_of("a") == ["k1", "k2"]
    proxy.sort(MESSAGES, Qt.SortOrder.DescendingOrder)
    assert order() == ["b", "a", "c"]
    assert model.children_of("a") == ["k1", "k2"]
    model.upsert(summary("c", title="cherry", messages=40, model="gpt-a",
                         updated="2025-01-01T03:00:00Z"))
    assert order() == ["c", "b", "a"]
    proxy.sort(MESSAGES, Qt.SortOrder.AscendingOrder)
    assert order() == ["a", "b", "c"]
    assert model.children_of("a") == ["k2", "k1"]
    proxy.sort(MODEL, Qt.SortOrder.AscendingOrder)  # equal models: by last activity
    assert order() == ["b", "c", "a"]
    assert model.sort_order == (MODEL, Qt.SortOrder.AscendingOrder)
    model.upsert(summary("d", title="date", messages=0, model="gpt-a",
                         updated="2025-01-01T02:30:00Z"))
    assert order() == ["b", "d", "c", "a"]
    qtmodeltester.check(proxy)


def test_merge_over_a_preview_changes_only_the_rows_that_differ(
        tree: SessionTreeModel, qtmodeltester: Any) -> None:
    """The listing after the rows from the index: a changed row is updated, a new one
    inserted beneath its source, a missing one removed; no reset, selection kept."""
    resets: list[int] = []
    changed: list[str] = []
    tree.modelReset.connect(lambda: resets.append(1))
    tree.dataChanged.connect(lambda top, _bottom: changed.append(top.data(ID_ROLE)))
    kept = QPersistentModelIndex(tree.index_for("a"))
    tree.merge([summary("a"), summary("b", "a", messages=9), summary("s", "a", "subagent"),
                summary("d", "b")])
    qtmodeltester.check(tree)
    assert resets == []
    assert model_tree(tree) == {"a": {"b": {"d": {}}, "s": {}}}
    assert "b" in changed
    assert "a" not in changed
    assert "s" not in changed
    assert tree.data(tree.index_for("b", MESSAGES)) == "9"
    assert kept.isValid()
    assert kept.data(ID_ROLE) == "a"


def test_merge_with_many_changes_loads_once(qtmodeltester: Any) -> None:
    model = SessionTreeModel()
    model.load([summary(f"p{i:04d}") for i in range(300)])
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.merge([summary(f"p{i:04d}", messages=7) for i in range(300)])
    qtmodeltester.check(model)
    assert resets == [1]
    assert {model.summary(f"p{i:04d}")["messages"] for i in range(300)} == {7}  # type: ignore[index]


def test_cells_asked_again_after_a_change_elsewhere(qtmodeltester: Any) -> None:
    """`data` keeps its answers for scrolling, but a change to one row can rename another
    (a fork not renamed yet is called after its source): every answer is dropped."""
    model = SessionTreeModel()
    model.load([summary("a", title="Lemurs", firstQuestion="q", titleSet=True),
                summary("b", "a", title="Lemurs", firstQuestion="q", titleSet=True)])
    qtmodeltester.check(model)
    fork = model.index_for("b", TITLE)
    assert model.data(fork) == "Lemurs — fork 1"
    assert model.data(fork) == "Lemurs — fork 1"  # from what it kept
    model.upsert(summary("a", title="Pangolins", firstQuestion="q", titleSet=True))
    assert model.data(model.index_for("b", TITLE)) == "Lemurs"  # its own title now
    assert model.data(model.index_for("a", TITLE)) == "Pangolins"
    model.remove("a")
    assert model.data(model.index_for("b", TITLE)) == "Lemurs"
    assert model.data(model.index_for("b", TITLE), Qt.ItemDataRole.FontRole) is None


def test_a_row_says_which_folder_its_session_worked_in(
    qapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions of many projects sit in one list (an agent's imports): the row's tooltip
    names the session's working folder, the home folder written as ~."""
    monkeypatch.setenv("HOME", "/home/ada")
    model = SessionTreeModel()
    model.load([{**summary("a"), "cwd": "/home/ada/dev/parser"},
                {**summary("b"), "cwd": "/srv/build"}, {**summary("c"), "cwd": ""}])
    tips = {sid: model.data(model.index_for(sid), Qt.ItemDataRole.ToolTipRole)
            for sid in "abc"}
    assert "Folder: ~/dev/parser" in tips["a"].splitlines()
    assert "Folder: /srv/build" in tips["b"].splitlines()
    assert not any(line.startswith("Folder:") for line in tips["c"].splitlines())


def test_a_row_is_disabled_while_its_session_cannot_be_read(qtbot: Any) -> None:
    """`flags` follows each row's error through load, upsert and remove (its rows are
    looked up by key, not through the summary)."""
    model = SessionTreeModel()
    error = {"code": "corrupt-log", "message": "line 3 is not JSON"}
    model.load([summary("a"), summary("b", error=error), summary("c", parent="a")])
    model.fetch_all()

    def enabled(sid: str) -> bool:
        return bool(model.flags(model.index_for(sid)) & Qt.ItemFlag.ItemIsEnabled)

    assert enabled("a")
    assert not enabled("b")
    assert enabled("c")
    model.upsert(summary("b"))  # repaired
    model.upsert(summary("c", parent="a", error=error))  # broken since
    assert enabled("b")
    assert not enabled("c")
    assert model.flags(NO_INDEX) == Qt.ItemFlag.NoItemFlags
    stale = model.index_for("c")
    model.remove("c")
    assert not model.flags(stale) & Qt.ItemFlag.ItemIsEnabled  # a row that is gone
    model.upsert(summary("d", error=error))  # a new row that cannot be read
    assert not enabled("d")
    assert enabled("a")
    assert model.rowCount(NO_INDEX) == 3
    assert model.rowCount(model.index_for("a")) == 0


def test_a_complete_row_is_kept_as_it_is_and_a_partial_one_completed() -> None:
    """The client's rows carry every key: kept, not copied (the tree keeps 100,000 of
    them); a partial row (an older host, a test) gets the missing keys' defaults."""
    from forkwise.core.client.rows import KEYS, session_row

    partial = {"id": "a", "title": "A", "waitingTools": ["read"]}
    row = session_row(partial)
    assert set(row) == KEYS
    assert (row["title"], row["parentSession"], row["messages"], row["titleSet"]) == (
        "A", None, 0, True)
    assert session_row(row) is row
    assert session_row(partial) is not row


def test_the_first_usage_of_a_row_repaints_it(tree: SessionTreeModel) -> None:
    """A row listed without usage gets its first cost: its cells change (the usage as
    listed is {"own": part}; it was read as if it were a row, and found no tokens)."""
    from forkwise.gui.models.session_rows import COST

    changed: list[str] = []
    tree.dataChanged.connect(lambda first, _last, _roles=(): changed.append(first.data(ID_ROLE)))
    assert tree.data(tree.index_for("c").siblingAtColumn(COST)) == "—"
    own = {"input": 1200, "output": 480, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0,
           "cost": 0.0123}
    tree.set_usage({"c": {"own": own}})
    assert "c" in changed
    assert tree.data(tree.index_for("c").siblingAtColumn(COST)) == "$0.01"
