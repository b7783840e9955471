"""The agents people already use: File → Import… (Claude Code, Codex, pi, Forkwise files),
File → Agent sources… (keep up with the agents' folders while the app is open), and
Session → Continue in ▸ (write the session for the agent it came from, with the command
that resumes it). Everything goes through the client: the host reads and writes the files
on its machine.

`install(window)` adds the actions to the window's menus and the origin line under the
session's title; the dialogs (import_dialogs, continue_in) open with `open()`,
and the agents' folders are watched from gui/features/agents/source_watch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QVBoxLayout

from forkwise.gui.features.agents.continue_in import (
    continue_in,
    enable_continue,
    message_continue_menu,
    source_of,
)
from forkwise.gui.features.agents.import_dialogs import ImportDialog, SourcesDialog
from forkwise.gui.features.agents.source_watch import start_watching_when_still
from forkwise.gui.widgets.elided_label import ElidedLabel
from forkwise.gui.widgets.source_badges import (
    FOREIGN,
    TOOL_NAMES,
    continued_text,
    source_icon,
    tool_name,
)

if TYPE_CHECKING:
    from forkwise.gui.shell.main_window import MainWindow

Json = dict[str, Any]


def install(window: MainWindow) -> None:
    """Import…, Agent sources… and Continue in ▸ on the window's menus; watching starts
    once the store is loaded (the tools whose folders exist, unless the person chose)."""
    c = window.controller
    file_menu = window.findChild(QMenu, "menuFile")
    session_menu = window.findChild(QMenu, "menuSession")
    act_import = QAction("&Import sessions…", window)
    act_import.setObjectName("actionImport")
    act_import.setShortcut(QKeySequence("Ctrl+I"))
    act_import.setStatusTip("Import sessions of Claude Code, Codex, pi or Forkwise")
    act_import.triggered.connect(lambda: ImportDialog(window).open())
    act_sources = QAction("Agent &sources…", window)
    act_sources.setObjectName("actionSources")
    act_sources.setStatusTip("Keep up with the sessions Claude Code, Codex and pi write")
    act_sources.triggered.connect(lambda: SourcesDialog(window).open())
    if file_menu is not None:
        actions = file_menu.actions()
        if len(actions) > 1:  # after New session
            file_menu.insertAction(actions[1], act_import)
            file_menu.insertAction(actions[1], act_sources)
        else:
            file_menu.addAction(act_import)
            file_menu.addAction(act_sources)
    window.addAction(act_import)
    continue_menu = QMenu("Continue &in", window)
    continue_menu.setObjectName("menuContinueIn")
    for tool in FOREIGN:
        act = QAction(source_icon(tool), TOOL_NAMES[tool], window)
        act.setObjectName(f"actionContinue{tool.capitalize()}")
        act.setStatusTip(f"Write this session as a {TOOL_NAMES[tool]} session and resume it there")
        act.triggered.connect(lambda _=False, t=tool: continue_in(window, t))
        continue_menu.addAction(act)
    if session_menu is not None:
        session_menu.addSeparator()
        session_menu.addMenu(continue_menu)
    continue_menu.aboutToShow.connect(lambda: enable_continue(window, continue_menu))
    window.transcript.menu_extensions.append(
        lambda menu, row, enabled: message_continue_menu(window, menu, row, enabled)
    )
    from forkwise.gui.sessions import empty_list
    from forkwise.gui.transcript import fork_marks, subagent_link

    fork_marks.install(window)  # where forks continue from, under that row
    subagent_link.install(window)  # a Task call's menu opens the subagent it started
    empty_list.install(window)  # an empty list says how to start (New session, Import…)
    from forkwise.gui.shell.pane_balance import PaneBalance

    window.pane_balance = PaneBalance(window.splitter)  # the list gives way in a small window
    c.treeLoaded.connect(lambda _n: start_watching_when_still(window))
    detail = window.header_label.parentWidget()
    # a long path must not widen the pane (and squeeze the session list): its middle is
    # elided, so the agent's name and the file's name stay in view
    origin = ElidedLabel(detail, Qt.TextElideMode.ElideMiddle)
    origin.setObjectName("originLabel")
    origin.setAccessibleName("Where this session came from")
    origin.setContentsMargins(8, 0, 8, 0)
    origin.setVisible(False)
    pane = detail.layout() if detail is not None else None
    if isinstance(pane, QVBoxLayout):  # just under the session's title
        pane.insertWidget(pane.indexOf(window.header_label) + 1, origin)
    c.sessionOpened.connect(lambda sid: _show_origin(window, origin, sid))


def _show_origin(window: MainWindow, label: ElidedLabel, session_id: str) -> None:
    """Under the session's title: the agent and file an imported session came from, or
    that a fork descends from one (so Continue in knows where it goes back to)."""
    c = window.controller
    row = c.client.catalogue.get(session_id) or {}
    tool = source_of(window, session_id)
    label.setVisible(False)
    if tool is None:
        return
    if not row.get("source"):
        label.setText(f"A fork of a {tool_name(tool)} session — Session → Continue in "
                      f"{tool_name(tool)} resumes it there")
        label.setVisible(True)
        return

    def shown(info: Json) -> None:
        if c.current != session_id:
            return  # another session was opened meanwhile
        source = (info.get("header", {}).get("meta") or {}).get("source") or {}
        continued = row.get("relation") == "continued"  # a Continue in read back
        lead = continued_text(tool) if continued else f"Imported from {tool_name(tool)}"
        label.lead = f"{lead}: "
        label.setText(f"{label.lead}{source.get('path', '')}")
        # the path's middle may be elided at the pane's width: all of it a hover away
        label.setToolTip(f"{source.get('path', '')}\n{tool_name(tool)} session "
                         f"{source.get('id', '')}")
        label.setVisible(True)

    c.ops.run(c.client.get_session(session_id), shown, what="Reading the session's source")
