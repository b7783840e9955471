"""The session pane's filter field and its Search all sessions page: filtering shows every
match with the path to it, and the search page takes the list's place while open. Built
when first used (`MainWindow.filter_page`), after the first frame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout

if TYPE_CHECKING:
    from forkwise.gui.shell.tree_keeping import TreeKeeping
    from forkwise.gui.shell.window_parts import Window


class FilterPage:
    """The filter's and the search page's behaviour in the window's session pane."""

    def __init__(self, window: Window, keeping: TreeKeeping) -> None:
        self.window = window
        self.keeping = keeping

    def search_page(self) -> Any:
        """The Search all sessions panel, built when first asked for (hidden): in the
        session pane, where it takes the list's place while open (`show_search`)."""
        w = self.window
        if w.search_panel is None:
            from forkwise.gui.sessions.search_panel import SearchPanel

            pane = w.tree.parentWidget()
            assert pane is not None  # the session pane (`_build_panes`)
            w.search_panel = panel = SearchPanel(w.controller, pane)
            panel.hide()
            layout = pane.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.addWidget(panel, 1)
            panel.resultActivated.connect(
                lambda sid, seq: w.select_session(sid, at_seq=seq or None))
            panel.hitOpened.connect(w.transcript.delegate.mark_hit)
            panel.closeRequested.connect(w.hide_search)
        return w.search_panel

    def filter_now(self) -> None:
        self.window.controller.search(self.window.filter_box.text())
        self.filter_shown()

    def filter_shown(self) -> None:
        """While filtering, every match is shown with the path to it (its ancestors are
        expanded: the matching fork is seen beneath its source); once the filter is
        cleared, lineages are expanded as the person left them and the open session is
        selected and in view again."""
        w = self.window
        c = w.controller
        if c.proxy.pattern:
            w.tree.expandAll()  # only the matches and their ancestors are rows
            return
        self.keeping.expand_reordered_lineage()
        if c.current:
            w.select_session(c.current)

    def filter_to_tree(self) -> None:
        w = self.window
        w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        if not w.tree.currentIndex().isValid():
            first = w.controller.proxy.index(0, 0)
            if first.isValid():
                w.tree.setCurrentIndex(first)

    def focus_filter(self) -> None:
        w = self.window
        self.hide_search(focus=False)
        w.filter_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        w.filter_box.selectAll()

    def show_search(self) -> None:
        """The search in the session list's place (the list keeps its selection)."""
        w = self.window
        panel = self.search_page()
        w.filter_box.hide()
        w.tree.hide()
        panel.show()
        panel.focus()

    def hide_search(self, focus: bool = True) -> None:
        """The session list back in its place, with the keyboard in it."""
        w = self.window
        if w.search_panel is None or not w.search_panel.isVisibleTo(w):
            return
        w.search_panel.hide()
        w.filter_box.show()
        w.tree.show()
        if focus:
            w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
