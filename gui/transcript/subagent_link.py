"""From a Task call to the subagent it started: a link at the foot of the call's card
(`TranscriptView.subagent_of`, Enter on the row too) and "Open subagent" first in its menu,
as Claude Code shows a subagent's work under its Task call. The subagent is the opened
session's child (relation "subagent") whose first question is the call's prompt; the
link is read from the tree's rows, nothing is asked of the host."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from forkwise.core.reading.entries import TOOL
from forkwise.gui.models.session_rows import ID_ROLE
from forkwise.gui.widgets.foot_link import FootLink, short_title

if TYPE_CHECKING:
    from forkwise.gui.shell.main_window import MainWindow

OPEN_SUBAGENT = "actionOpenSubagent"


class SubagentLink(FootLink):
    """The link at the foot of a Task call's card to the subagent session it started."""

    def __init__(self, session_id: str, title: str, parent: QWidget) -> None:
        super().__init__(session_id, f"↳ Open subagent: {short_title(title)}", parent)
        self.setObjectName("subagentLink")
        self.setAccessibleName(f"Open subagent {title}")
        self.setToolTip("Show the session of the subagent this call started (Enter)")


def subagent_of(window: MainWindow, row: int) -> str | None:
    """The subagent session the tool call at `row` started, if it is in the store."""
    c = window.controller
    entry = c.transcript.entry(row)
    if entry is None or entry.kind != TOOL or c.current is None:
        return None
    args = entry.data.get("args")
    prompt = args.get("prompt") if isinstance(args, dict) else None
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    for child in c.tree.children_of(c.current):
        summary = c.tree.summary(child) or {}
        if summary.get("relation") != "subagent":
            continue
        if prompt.strip() in (str(summary.get("firstQuestion") or "").strip(),
                              str(summary.get("title") or "").strip()):
            return child
    return None


def add_open_subagent(window: MainWindow, menu: QMenu, row: int) -> None:
    """First in the menu of a call that started a subagent: open that session."""
    child = subagent_of(window, row)
    if child is None:
        return
    title = window.controller.tree.title_of(child)
    action = QAction(f"Open subagent: {short_title(title)}", menu)
    action.setObjectName(OPEN_SUBAGENT)
    action.setStatusTip("Show the session of the subagent this call started")
    action.triggered.connect(lambda: window.select_session(child))
    actions = menu.actions()
    if not actions:
        menu.addAction(action)
        return
    menu.insertAction(actions[0], action)
    menu.insertSeparator(actions[0])


def install(window: MainWindow) -> None:
    view, tree = window.transcript, window.controller.tree
    view.menu_extensions.append(lambda menu, row, _enabled: add_open_subagent(window, menu, row))
    view.subagent_of = lambda row: subagent_of(window, row)
    c = window.controller

    def rows_changed(parent: QModelIndex, *_rows: Any) -> None:
        """A subagent (or a fork) of the opened session came or went after its row was
        shown: the links follow. Rows elsewhere in the tree change nothing here (a sync
        walks every loaded row: 26 ms for 5,000 rows of a 100k-event session)."""
        if c.current is not None and parent.isValid() and parent.data(ID_ROLE) == c.current:
            view.sync_links()

    tree.rowsInserted.connect(rows_changed)
    tree.rowsRemoved.connect(rows_changed)

    def rows_moved(old: QModelIndex, _first: int, _last: int, new: QModelIndex,
                   _row: int) -> None:  # a row that found its source
        rows_changed(old)
        rows_changed(new)

    tree.rowsMoved.connect(rows_moved)
    tree.modelReset.connect(view.sync_links)
    view.sync_links()  # the transcript shown before this was installed
