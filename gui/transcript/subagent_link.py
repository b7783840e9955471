"""From a Task call to the subagent it started: a link at the foot of the call's card
(`TranscriptView.subagent_of`, Enter on the row too) and "Open subagent" first in its menu,
as Claude Code shows a subagent's work under its Task call. The subagent is the opened
session's child (relation "subagent") whose first question is the call's prompt; the
link is read from the tree's rows, nothing is asked of the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from forkwise.core.reading.entries import TOOL
from forkwise.gui.widgets.foot_link import FootLink, short_title

if TYPE_CHECKING:
    from collections.abc import Callable

    from forkwise.gui.kernel.controller import Controller

OPEN_SUBAGENT = "actionOpenSubagent"


class SubagentLink(FootLink):
    """The link at the foot of a Task call's card to the subagent session it started."""

    def __init__(self, session_id: str, title: str, parent: QWidget) -> None:
        super().__init__(session_id, f"↳ Open subagent: {short_title(title)}", parent)
        self.setObjectName("subagentLink")
        self.setAccessibleName(f"Open subagent {title}")
        self.setToolTip("Show the session of the subagent this call started (Enter)")


def subagent_of(c: Controller, row: int) -> str | None:
    """The subagent session the tool call at `row` started, if it is in the store."""
    entry = c.transcript.entry(row)
    if entry is None or entry.kind != TOOL or c.current is None:
        return None
    prompt = entry.task_prompt
    if prompt is None or not prompt.strip():
        return None
    for child in c.tree.children_of(c.current):
        summary = c.tree.summary(child)
        if summary is None or summary["relation"] != "subagent":
            continue
        if prompt.strip() in ((summary["firstQuestion"] or "").strip(),
                              summary["title"].strip()):
            return child
    return None


def add_open_subagent(c: Controller, select: Callable[[str], None], menu: QMenu,
                      row: int) -> None:
    """First in the menu of a call that started a subagent: open that session."""
    child = subagent_of(c, row)
    if child is None:
        return
    title = c.tree.title_of(child)
    action = QAction(f"Open subagent: {short_title(title)}", menu)
    action.setObjectName(OPEN_SUBAGENT)
    action.setStatusTip("Show the session of the subagent this call started")
    action.triggered.connect(lambda: select(child))
    actions = menu.actions()
    if not actions:
        menu.addAction(action)
        return
    menu.insertAction(actions[0], action)
    menu.insertSeparator(actions[0])

