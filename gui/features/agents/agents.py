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

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from forkwise.core.client.rows import session_row
from forkwise.core.client.session_info import ImportedFrom, imported_from
from forkwise.gui.features.agents.continue_in import (
    continue_in,
    enable_continue,
    message_continue_menu,
    source_of,
)
from forkwise.gui.features.agents.import_dialogs import ImportDialog, SourcesDialog
from forkwise.gui.features.agents.source_watch import start_watching_when_still
from forkwise.gui.shell.bench import ActionSpec, Bench, MenuId, Place
from forkwise.gui.widgets.elided_label import ElidedLabel
from forkwise.gui.widgets.source_badges import (
    FOREIGN,
    TOOL_KEYS,
    TOOL_NAMES,
    continued_text,
    source_icon,
    tool_name,
)

Json = dict[str, Any]
#: the origin line of an imported session whose agent deleted its file
GONE_TEXT = "the source file is gone; this copy is kept"


def install(window: Bench) -> None:
    """Import…, Agent sources… and Continue in ▸ on the window's menus; the origin line
    under the title; watching starts once the store is loaded (the tools whose folders
    exist, unless the person chose)."""
    c = window.controller
    file, session = MenuId.FILE, MenuId.SESSION
    window.add_action(ActionSpec(
        "actionImport", "&Import sessions…",
        "Import sessions of Claude Code, Codex, pi, Gemini CLI, OpenCode or Forkwise", "Ctrl+I",
        (Place(file, 0, 20),), lambda: ImportDialog(window).open()))
    window.add_action(ActionSpec(
        "actionSources", "Agent &sources…",
        "Keep up with the sessions Claude Code, Codex, pi, Gemini CLI and OpenCode write", None,
        (Place(file, 0, 30),), lambda: SourcesDialog(window).open()))
    continue_menu = QMenu("Continue &in", window.widget())
    continue_menu.setObjectName("menuContinueIn")
    for tool in FOREIGN:
        act = QAction(source_icon(tool), TOOL_KEYS[tool], continue_menu)
        act.setObjectName(f"actionContinue{tool.capitalize()}")
        act.setStatusTip(f"Write this session as a {TOOL_NAMES[tool]} session and resume it there")
        act.triggered.connect(lambda _=False, t=tool: continue_in(window, t))
        continue_menu.addAction(act)
    window.add_menu(Place(session, 5, 10), continue_menu)
    continue_menu.aboutToShow.connect(lambda: enable_continue(window, continue_menu))
    window.transcript.add_menu_contributor(
        lambda menu, row, enabled: message_continue_menu(window, menu, row, enabled)
    )
    c.treeLoaded.connect(lambda _n: start_watching_when_still(window))
    if c.loaded:  # the tree loaded before this was installed
        start_watching_when_still(window)
    # a long path must not widen the pane (and squeeze the session list): its middle is
    # elided, so the agent's name and the file's name stay in view
    origin = ElidedLabel(window.widget(), Qt.TextElideMode.ElideMiddle)
    origin.setObjectName("originLabel")
    origin.setAccessibleName("Where this session came from")
    origin.setContentsMargins(8, 0, 8, 0)
    origin.setVisible(False)
    window.add_detail_line(origin)  # just under the session's title
    c.sessionOpened.connect(lambda sid: _show_origin(window, origin, sid))


def _show_origin(window: Bench, label: ElidedLabel, session_id: str) -> None:
    """Under the session's title: the agent and file an imported session came from, or
    that a fork descends from one (so Continue in knows where it goes back to)."""
    c = window.controller
    row = session_row(c.client.catalogue.get(session_id) or {"id": session_id})
    tool = source_of(window, session_id)
    label.setVisible(False)
    if tool is None:
        return
    if not row["source"]:
        label.setText(f"A fork of a {tool_name(tool)} session — Session → Continue in "
                      f"{tool_name(tool)} resumes it there")
        label.setVisible(True)
        return

    def shown(info: Json) -> None:
        if c.current != session_id:
            return  # another session was opened meanwhile
        source = imported_from(info) or ImportedFrom(path="", id="")
        continued = row["relation"] == "continued"  # a Continue in read back
        lead = continued_text(tool) if continued else f"Imported from {tool_name(tool)}"
        present = (info.get("sourceFile") or {}).get("present", True)
        if not present:  # the agent deleted its file (Claude Code does after 30 days)
            lead += f" — {GONE_TEXT}"
        label.lead = f"{lead}: "
        label.setText(f"{label.lead}{source['path']}")
        # the path's middle may be elided at the pane's width: all of it a hover away
        label.setToolTip(f"{source['path']}\n{tool_name(tool)} session {source['id']}"
                         + ("" if present else f"\n{GONE_TEXT.capitalize()}"))
        label.setVisible(True)

    c.ops.run(c.client.get_session(session_id), shown, what="Reading the session's source")
