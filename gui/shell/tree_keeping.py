"""The session tree's selection and expansion, kept as its rows change: the rows of the
store's index shown while it opens, the listing that replaces them, the pages fetched
after, a new sort order, and the lineages a person collapsed. Built with the window's rest
(`MainWindow.build_rest`): the first frame has no rows to keep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex

from forkwise.gui.models.session_rows import ID_ROLE

if TYPE_CHECKING:
    from forkwise.gui.shell.window_parts import Window


class TreeKeeping:
    """What the window's tree keeps across loads, sorts and filters."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.collapsed: set[str] = set()  # sessions a person collapsed in the tree
        self.kept_selection: str | None = None

    def select(self, session_id: str, at_seq: int | None = None) -> None:
        """Select `session_id` in the tree (lineage expanded) and open it: at its end, or
        at event `at_seq`."""
        w = self.window
        c = w.controller
        source = c.tree.reveal(session_id)  # fetches its top-level row if need be
        if not source.isValid():
            return
        if at_seq is not None:  # opened there first: selecting the row keeps it open
            c.open_session(session_id, at_seq=at_seq)
        index = c.proxy.mapFromSource(source)
        if not index.isValid() and c.proxy.pattern:
            w.filter_box.clear()
            c.search("")
            index = c.proxy.mapFromSource(source)
        parent = index.parent()
        while parent.isValid():
            w.tree.expand(parent)
            parent = parent.parent()
        from PySide6.QtCore import QItemSelectionModel

        w.tree.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        w.tree.scrollTo(index)
        c.open_session(session_id)

    def tree_previewed(self, _count: int) -> None:
        """Rows from the store's index, shown while the store opens: to look at and
        select; opening a session and the actions wait for `tree_loaded`. The rows after
        the first page wait too: laying them out would hold the host's start back."""
        self.window.tree.placeholder.hide()
        self.expand_lineage()

    def keep_selection(self) -> None:
        """The listing replaces a preview's rows (a reset): the row chosen meanwhile is
        chosen again once it is in (`tree_loaded`)."""
        w = self.window
        c = w.controller
        self.kept_selection = w.selected_session() if c.previewed and not c.loaded else None

    def tree_loaded(self, count: int) -> None:
        w = self.window
        w.install_agents()
        folders = w.controller.tree.folders()
        w.columns.offer_folder(len(folders) > 1)
        w.columns.name_folders(folders)
        w.tree.placeholder.hide()
        w.tree.rest_pending = True
        w.action_new.setEnabled(True)
        self.expand_lineage()
        current = w.tree.currentIndex()
        kept, self.kept_selection = self.kept_selection, None
        if current.isValid():  # chosen in the preview: opened now
            w.current_changed(current, QModelIndex())
        elif kept is not None and w.controller.tree.summary(kept) is not None:
            w.select_session(kept)
        elif count:
            first = w.controller.proxy.index(0, 0)
            if first.isValid():
                w.tree.setCurrentIndex(first)
        w.update_actions()

    def expand_lineage(self, first: int = 0, last: int | None = None) -> None:
        """Expand the rows with forks or subagents beneath them among the fetched top-level
        rows first..last (expandAll would visit every row: 0.12 s on 10,000 sessions)."""
        w = self.window
        model, proxy = w.controller.tree, w.controller.proxy
        for sid in model.lineage_parents(first, last):
            w.tree.expand(proxy.mapFromSource(model.index_for(sid)))

    def expand_reordered_lineage(self, *_args: Any) -> None:
        """A new order (a sort) can bring top-level rows that were not fetched yet into
        the fetched ones, with no rowsFetched for them: expand the lineage among those.
        Rows a person collapsed stay collapsed."""
        w = self.window
        model, proxy = w.controller.tree, w.controller.proxy
        for sid in model.lineage_parents():
            if sid not in self.collapsed:
                w.tree.expand(proxy.mapFromSource(model.index_for(sid)))

    def expanded_changed(self, index: QModelIndex, expanded: bool) -> None:
        sid = index.data(ID_ROLE)
        if isinstance(sid, str):
            (self.collapsed.discard if expanded else self.collapsed.add)(sid)
