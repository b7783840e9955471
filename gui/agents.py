"""The agents people already use: File → Import… (Claude Code, Codex, pi, Forkwise files),
File → Agent sources… (keep up with the agents' folders while the app is open), and
Session → Continue in ▸ (write the session for the agent it came from, with the command
that resumes it). Everything goes through the client: the host reads and writes the files
on its machine.

`install(window)` adds the actions to the window's menus; the dialogs open with `open()`.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QProcess, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.api import IMPORT_PROGRESS, Notification

from .elided_label import ElidedLabel
from .source_badges import TOOL_NAMES, continued_text, source_icon, tool_name

if TYPE_CHECKING:
    from .main_window import MainWindow

Json = dict[str, Any]
FOREIGN = ("claude", "codex", "pi")
WATCH_KEY = "sources/watch"
#: the agents' folders are first looked at once the tree has been still this long (ms)
#: after its rows came in, and at the latest this long (ms) after: that first look
#: imports the formats (~50 ms of CPU on a worker, holding the GIL in pieces), which
#: made the first page-downs of a person who scrolls right away wait
WATCH_WHEN_STILL = 300
WATCH_AT_THE_LATEST = 1000


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
    continue_menu = QMenu("&Continue in", window)
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
    continue_menu.aboutToShow.connect(lambda: _enable_continue(window, continue_menu))
    window.transcript.menu_extensions.append(
        lambda menu, row, enabled: _message_continue_menu(window, menu, row, enabled)
    )
    from . import empty_list, fork_marks, subagent_link

    fork_marks.install(window)  # where forks continue from, under that row
    subagent_link.install(window)  # a Task call's menu opens the subagent it started
    empty_list.install(window)  # an empty list says how to start (New session, Import…)
    from .pane_balance import PaneBalance

    window.pane_balance = PaneBalance(window.splitter)  # the list gives way in a small window
    c.treeLoaded.connect(lambda _n: _start_watching_when_still(window))
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


def _message_continue_menu(window: MainWindow, menu: QMenu, row: int, enabled: bool) -> None:
    """Continue in ▸ on a message: fork through that message's turn, then write the fork
    for the agent (offered where Fork from here is)."""
    sub = menu.addMenu("Continue &in")
    sub.setObjectName("messageContinueIn")
    sub.setEnabled(enabled)
    sub.setToolTipsVisible(True)
    origin = source_of(window, window.controller.current)
    for tool in FOREIGN:
        label = TOOL_NAMES[tool] + ("  (where it came from)" if tool == origin else "")
        act = sub.addAction(source_icon(tool), label)
        act.setObjectName(f"messageContinue{tool.capitalize()}")
        act.setToolTip(f"Fork through this message's turn and resume the fork in {label}")
        act.triggered.connect(lambda _=False, t=tool: continue_from_message(window, row, t))


def continue_from_message(window: MainWindow, row: int, tool: str) -> None:
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
        c.tree.upsert(child)
        window.select_session(child["id"])
        ContinueDialog(window, made, child).open()

    c.ops.run(fork_and_export(), done, what=f"Forking for {TOOL_NAMES[tool]}")


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


def source_of(window: MainWindow, session_id: str | None) -> str | None:
    """The tool the session, or the session it was forked from, was imported from."""
    catalogue = window.controller.client.catalogue
    seen: set[str] = set()
    while session_id is not None and session_id not in seen:
        seen.add(session_id)
        row = catalogue.get(session_id)
        if row is None:
            return None
        if row.get("source"):
            return str(row["source"])
        session_id = row.get("parentSession")
    return None


def _enable_continue(window: MainWindow, menu: QMenu) -> None:
    sid = window.controller.current
    origin = source_of(window, sid)
    for act in menu.actions():
        act.setEnabled(sid is not None)
        tool = act.objectName().removeprefix("actionContinue").lower()
        act.setText(TOOL_NAMES[tool] + ("  (where it came from)" if tool == origin else ""))


def _start_watching_when_still(window: MainWindow) -> None:
    """`_start_watching` once the tree has not scrolled for `WATCH_WHEN_STILL` ms, or
    `WATCH_AT_THE_LATEST` ms after now, whichever comes first."""
    if window.property("watchingStarted") or window.property("watchingWaits"):
        return
    window.setProperty("watchingWaits", True)
    still, latest = QTimer(window), QTimer(window)
    for timer, ms in ((still, WATCH_WHEN_STILL), (latest, WATCH_AT_THE_LATEST)):
        timer.setSingleShot(True)
        timer.setInterval(ms)
    moved = window.tree.verticalScrollBar().valueChanged

    def restart(_value: int) -> None:
        still.start()

    def start() -> None:
        if _inside_a_task():  # Qt's events handled inside a coroutine: not from there
            still.start()
            return
        for timer in (still, latest):
            timer.stop()
            timer.deleteLater()
        moved.disconnect(restart)
        _start_watching(window)

    moved.connect(restart)
    still.timeout.connect(start)
    latest.timeout.connect(start)
    still.start()
    latest.start()


def _inside_a_task() -> bool:
    """Whether a coroutine is running (a timer fired in events it had Qt handle): a task
    started from there would be stepped inside that one's step, which asyncio refuses."""
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no loop running
        return False


def _start_watching(window: MainWindow) -> None:
    c = window.controller
    chosen = window.settings.value(WATCH_KEY)

    def progress(note: Notification) -> None:
        if note["kind"] == IMPORT_PROGRESS and not window.findChild(QDialog, "importDialog"):
            done, total = int(note["done"]), int(note["total"])
            text = f"Bringing in the agents' sessions… {done:,} of {total:,} files"
            window.statusBar().showMessage(text if done < total else "", 0 if done < total else 1)

    async def start() -> Json:
        await c.client.subscribe(progress)
        found = await c.client.sources()
        tools = (
            [t for t in str(chosen).split(",") if t]
            if chosen is not None
            else [s["tool"] for s in found["sources"] if s["found"]]
        )
        return await c.client.watch_sources(tools) if tools else found

    if window.property("watchingStarted"):
        return  # once per window: a reload of the tree does not start it again
    window.setProperty("watchingStarted", True)
    c.ops.run(start(), what="Watching the agents' session folders")


class ImportDialog(QDialog):
    """Pick a tool and a folder (defaults pre-filled), import with progress, read what
    came in and what failed."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.controller = window.controller
        self.setObjectName("importDialog")
        self.setWindowTitle("Import sessions")
        self.setAccessibleName("Import sessions")
        self.tool = QComboBox(self)
        self.tool.setObjectName("importTool")
        self.tool.setAccessibleName("Tool")
        self.tool.addItem("Recognise each file", None)
        for key in (*FOREIGN, "forkwise"):
            self.tool.addItem(TOOL_NAMES[key], key)
        self.path = QLineEdit(self)
        self.path.setObjectName("importPath")
        self.path.setAccessibleName("Folder or file")
        self.path.setPlaceholderText("empty: the tools' own folders on this machine")
        browse = QPushButton("&Browse…", self)
        browse.setObjectName("importBrowse")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("importProgress")
        self.progress.setAccessibleName("Import progress")
        self.progress.setVisible(False)
        self.summary = QLabel(self)
        self.summary.setObjectName("importSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.go = self.buttons.addButton("&Import", QDialogButtonBox.ButtonRole.ApplyRole)
        self.go.setObjectName("importStart")
        self.go.setDefault(True)
        self.go.clicked.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&Tool:", self.tool)
        from_label = QLabel("&From:", self)
        from_label.setBuddy(self.path)  # the field holds a layout: name the line edit
        form.addRow(from_label, row)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.progress)
        lay.addWidget(self.summary)
        lay.addWidget(self.buttons)
        self.resize(560, 0)
        self._defaults: dict[str, str] = {}
        self.tool.currentIndexChanged.connect(self._prefill)
        self.controller.ops.run(
            self.controller.client.sources(),
            self._found,
            what="Looking for the agents' folders",
        )

    def _found(self, found: Json) -> None:
        for s in found["sources"]:
            if s["folders"]:
                self._defaults[s["tool"]] = s["folders"][0]
        self._prefill()

    def _prefill(self, *_args: Any) -> None:
        """The chosen tool's own folder, unless the person typed or picked one."""
        if self.path.text() and self.path.text() not in self._defaults.values():
            return
        self.path.setText(self._defaults.get(self.tool.currentData() or "", ""))

    def _browse(self) -> None:
        picker = QFileDialog(self, "Import from", self.path.text() or os.path.expanduser("~"))
        picker.setObjectName("importPicker")
        picker.setFileMode(QFileDialog.FileMode.Directory)
        picker.fileSelected.connect(self.path.setText)
        picker.open()

    def start(self) -> None:
        client = self.controller.client
        paths = [self.path.text().strip()] if self.path.text().strip() else []
        tool = self.tool.currentData()
        self.go.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.summary.setText("Importing…")

        def progress(note: Notification) -> None:
            if note["kind"] == IMPORT_PROGRESS:
                self.progress.setRange(0, int(note["total"]))
                self.progress.setValue(int(note["done"]))

        async def run() -> Json:
            unsubscribe = await client.subscribe(progress)
            try:
                return await client.import_files(paths, tool)
            finally:
                await unsubscribe()

        def failed(exc: BaseException) -> None:
            self.go.setEnabled(True)
            self.progress.setVisible(False)
            self.summary.setText(f"The import did not run: {exc}")

        self.controller.ops.run(run(), self.done_, failed, what="Importing sessions")

    def done_(self, report: Json) -> None:
        self.go.setEnabled(True)
        self.progress.setVisible(False)
        self.summary.setText(describe_import(report))
        first = (report["imported"] or report["updated"] or [None])[0]
        if first is not None:
            self.window_.select_session(first)


def describe_import(report: Json) -> str:
    """One paragraph a person reads after an import."""
    parts = [f"{len(report['imported'])} sessions imported"]
    if report["updated"]:
        parts.append(f"{len(report['updated'])} brought up to date")
    if report["unchanged"]:
        parts.append(f"{len(report['unchanged'])} already here and unchanged")
    text = ", ".join(parts) + "."
    if report.get("unmapped"):
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(report["unmapped"].items()))
        text += f" Kept as-is, with no Forkwise equivalent: {kinds}."
    failed = report["failed"]
    if failed:
        text += f"\n{len(failed)} file(s) could not be imported:"
        for f in failed[:8]:
            text += f"\n• {_failure(f)}"
        if len(failed) > 8:
            text += f"\n• … and {len(failed) - 8} more"
    return text


def _failure(f: Json) -> str:
    """One failed file: its path once (the host's message usually names it already)."""
    message, path = str(f["error"]["message"]), str(f["path"])
    if path in message:
        said = not f.get("line") or f"line {f['line']}" in message
        return message if said else f"{message} (line {f['line']})"
    return f"{path}, line {f['line']}: {message}" if f.get("line") else f"{path}: {message}"


class SourcesDialog(QDialog):
    """Which agents' folders the app keeps up with."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.controller = window.controller
        self.setObjectName("sourcesDialog")
        self.setWindowTitle("Agent sources")
        self.setAccessibleName("Agent sources")
        note = QLabel(
            "Sessions these agents write while Forkwise is open appear in the tree within a "
            "couple of seconds, and grow as the agent goes on.",
            self,
        )
        note.setWordWrap(True)
        self.boxes: dict[str, QCheckBox] = {}
        lay = QVBoxLayout(self)
        lay.addWidget(note)
        for tool in FOREIGN:
            box = QCheckBox(TOOL_NAMES[tool], self)
            box.setObjectName(f"source{tool.capitalize()}")
            box.setIcon(source_icon(tool))
            box.setEnabled(False)
            self.boxes[tool] = box
            lay.addWidget(box)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.controller.ops.run(
            self.controller.client.sources(),
            self._fill,
            what="Looking for the agents' folders",
        )

    def _fill(self, found: Json) -> None:
        watching = set(found["watching"])
        for s in found["sources"]:
            box = self.boxes.get(s["tool"])
            if box is None:
                continue
            box.setEnabled(True)
            box.setChecked(s["tool"] in watching)
            where = ", ".join(s["folders"]) or "not found on this machine"
            box.setToolTip(where)
            box.setText(f"{tool_name(s['tool'])} — {where}")

    def save(self) -> None:
        tools = [t for t, box in self.boxes.items() if box.isChecked()]
        self.window_.settings.setValue(WATCH_KEY, ",".join(tools))
        self.controller.ops.run(
            self.controller.client.watch_sources(tools),
            lambda _r: self.accept(),
            what="Watching the agents' session folders",
        )


def continue_in(window: MainWindow, tool: str) -> None:
    """Write the open session for `tool`, then show how to resume it there."""
    c = window.controller
    sid = c.current
    if sid is None:
        return
    c.ops.run(
        c.client.export_session(sid, tool),
        lambda made: ContinueDialog(window, made, c.client.catalogue.get(sid, {})).open(),
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

    def __init__(self, parent: QWidget, made: Json, row: Json) -> None:
        super().__init__(parent)
        self.setObjectName("continueDialog")
        name = tool_name(made["tool"])
        self.setWindowTitle(f"Continue in {name}")
        self.setAccessibleName(f"Continue in {name}")
        self.cwd = str(row.get("cwd") or os.path.expanduser("~"))
        self.resume = str(made["resume"])
        # Claude Code finds a session by the folder it is resumed in ("No conversation
        # found" elsewhere), and every agent's tools work in that folder: the command goes
        # there first, as Claude Code's own "cd … && claude --resume …" hint does
        command = (f"cd {shlex.quote(str(row['cwd']))} && {self.resume}" if row.get("cwd")
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
        self.resize(620, 0)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.command.text())

    def launch(self) -> None:
        if self.terminal is None:
            return
        script = f'cd {shlex.quote(self.cwd)} && {self.resume}; exec "${{SHELL:-sh}}"'
        QProcess.startDetached(self.terminal[0], ["-e", "sh", "-c", script])
