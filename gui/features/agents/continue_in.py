"""Session → Continue in ▸ and a message's Continue in ▸: write the session (or a fork
through a message's turn) for the agent it came from, then show the file written and the
command that resumes it there (Copy; Open a terminal there when one is found)."""

from __future__ import annotations

import os
import shlex
import shutil
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QProcess
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.rows import session_row
from forkwise.gui.widgets.source_badges import (
    FOREIGN,
    TOOL_KEYS,
    TOOL_NAMES,
    source_icon,
    tool_name,
)

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench

Json = dict[str, Any]


def message_continue_menu(window: Bench, menu: QMenu, row: int, enabled: bool) -> None:
    """Continue in ▸ on a message: fork through that message's turn, then write the fork
    for the agent (offered where Fork from here is)."""
    sub = menu.addMenu("Continue &in")
    sub.setObjectName("messageContinueIn")
    sub.setEnabled(enabled)
    sub.setToolTipsVisible(True)
    origin = source_of(window, window.controller.current)
    for tool in FOREIGN:
        label = TOOL_NAMES[tool] + ("  (where it came from)" if tool == origin else "")
        act = sub.addAction(source_icon(tool), keyed_label(tool, origin))
        act.setObjectName(f"messageContinue{tool.capitalize()}")
        act.setToolTip(f"Fork through this message's turn and resume the fork in {label}")
        act.triggered.connect(lambda _=False, t=tool: continue_from_message(window, row, t))


def continue_from_message(window: Bench, row: int, tool: str) -> None:
    """Fork through the message at `row` (as Fork from here), open the child, write it
    for `tool` and show how to resume it there."""
    c = window.controller
    entry = c.transcript.entry(row)
    source = c.current
    if source is None or entry is None or entry.message_seq is None:
        return
    seq = entry.message_seq

    async def fork_and_export() -> tuple[Json, Json]:
        child = await c.client.fork(source, at_seq=seq)
        made = await c.client.export_session(child["id"], tool)
        return child, made

    def done(result: tuple[Json, Json]) -> None:
        child, made = result
        c.apply_row(child)
        window.select_session(child["id"])
        ContinueDialog(window.widget(), made, child).open()

    c.ops.run(fork_and_export(), done, what=f"Forking for {TOOL_NAMES[tool]}")


def source_of(window: Bench, session_id: str | None) -> str | None:
    """The tool the session, or the session it was forked from, was imported from."""
    catalogue = window.controller.client.catalogue
    seen: set[str] = set()
    while session_id is not None and session_id not in seen:
        seen.add(session_id)
        found = catalogue.get(session_id)
        if found is None:
            return None
        row = session_row(found)
        if row["source"]:
            return row["source"]
        session_id = row["parentSession"]
    return None


def enable_continue(window: Bench, menu: QMenu) -> None:
    sid = window.controller.current
    origin = source_of(window, sid)
    for act in menu.actions():
        act.setEnabled(sid is not None)
        tool = act.objectName().removeprefix("actionContinue").lower()
        act.setText(keyed_label(tool, origin))


def keyed_label(tool: str, origin: str | None) -> str:
    """A Continue in entry: the tool's name with its access key, and whether the session
    came from it."""
    return TOOL_KEYS[tool] + ("  (where it came from)" if tool == origin else "")


def continue_in(window: Bench, tool: str) -> None:
    """Write the open session for `tool`, then show how to resume it there."""
    c = window.controller
    sid = c.current
    if sid is None:
        return
    c.ops.run(
        c.client.export_session(sid, tool),
        lambda made: ContinueDialog(window.widget(), made,
                                    c.client.catalogue.get(sid) or {"id": sid}).open(),
        what=f"Writing the session for {TOOL_NAMES[tool]}",
    )


def terminal_command() -> list[str] | None:
    """A terminal emulator found on this machine ($TERMINAL, else x-terminal-emulator)."""
    for candidate in (os.environ.get("TERMINAL"), "x-terminal-emulator"):
        if candidate and shutil.which(candidate):
            return [candidate]
    return None


class ContinueDialog(QDialog):
    """Where the session was written and the command that resumes it (Copy; Open a
    terminal there when one is found)."""

    def __init__(self, parent: QWidget, made: Json, data: Json) -> None:
        super().__init__(parent)
        self.setObjectName("continueDialog")
        name = tool_name(made["tool"])
        self.setWindowTitle(f"Continue in {name}")
        self.setAccessibleName(f"Continue in {name}")
        row = session_row(data)
        self.cwd = row["cwd"] or os.path.expanduser("~")
        self.resume = str(made["resume"])
        # Claude Code finds a session by the folder it is resumed in ("No conversation
        # found" elsewhere), and every agent's tools work in that folder: the command goes
        # there first, as Claude Code's own "cd … && claude --resume …" hint does
        command = (f"cd {shlex.quote(row['cwd'])} && {self.resume}" if row["cwd"]
                   else self.resume)
        # the file's path in a field of its own: a long one (an agent's folders are deep)
        # wrapped in a label pushed "Resume it with:" out of the dialog
        self.path = QLineEdit(str(made["path"]), self)
        self.path.setObjectName("writtenPath")
        self.path.setAccessibleName(f"The {name} session file")
        self.path.setReadOnly(True)
        self.path.setCursorPosition(0)
        self.path.setToolTip(str(made["path"]))
        self.command = QLineEdit(command, self)
        self.command.setObjectName("resumeCommand")
        self.command.setAccessibleName("Resume command")
        self.command.setReadOnly(True)
        copy = QPushButton("&Copy", self)
        copy.setObjectName("copyResume")
        copy.clicked.connect(self.copy)
        self.open_terminal = QPushButton("Open a &terminal there", self)
        self.open_terminal.setObjectName("openTerminal")
        self.terminal = terminal_command()
        self.open_terminal.setEnabled(self.terminal is not None)
        if self.terminal is None:
            self.open_terminal.setToolTip("No terminal found ($TERMINAL, x-terminal-emulator)")
        self.open_terminal.clicked.connect(self.launch)
        row_ = QHBoxLayout()
        row_.addWidget(self.command, 1)
        row_.addWidget(copy)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(self.open_terminal, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"Written as a {name} session:", self))
        lay.addWidget(self.path)
        lay.addSpacing(8)
        lay.addWidget(QLabel("Resume it with:", self))
        lay.addLayout(row_)
        lay.addWidget(buttons)
        # as wide as the whole command (its `cd` and the session id both matter; the
        # field showed its end, "d /home/…"), within the screen; a longer path shows
        # its start, whole in its tooltip
        self.command.setCursorPosition(0)
        room = self.screen().availableGeometry().width() - 60
        for field, beside in ((self.command, copy.sizeHint().width()), (self.path, 0)):
            need = field.fontMetrics().horizontalAdvance(field.text()) + 16
            field.setMinimumWidth(min(need, room - beside))
        self.resize(max(620, self.sizeHint().width()), 0)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.command.text())

    def launch(self) -> None:
        if self.terminal is None:
            return
        script = f'cd {shlex.quote(self.cwd)} && {self.resume}; exec "${{SHELL:-sh}}"'
        QProcess.startDetached(self.terminal[0], ["-e", "sh", "-c", script])
