"""File → Import… and File → Agent sources…: the dialogs that bring the agents' sessions
in once, and choose which agents' folders the app keeps up with."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
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
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from forkwise.core.client.api import IMPORT_PROGRESS, Notification
from forkwise.core.client.reports import ImportReport, import_report
from forkwise.gui.features.agents.source_watch import WATCH_KEY, failure_lines
from forkwise.gui.widgets.source_badges import FOREIGN, TOOL_NAMES, source_icon, tool_name

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench

Json = dict[str, Any]


class ImportDialog(QDialog):
    """Pick a tool and a folder (defaults pre-filled), import with progress, read what
    came in and what failed."""

    def __init__(self, window: Bench) -> None:
        super().__init__(window.widget())
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

    def fit_text(self) -> None:
        """The dialog grows to show the whole result: its height was set for the empty
        form, and a report of several lines was cut to its first."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        needed = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() \
            else layout.totalSizeHint().height()
        if needed > self.height():
            self.resize(self.width(), needed)

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
            self.fit_text()

        self.controller.ops.run(run(), self.done_, failed, what="Importing sessions")

    def done_(self, report: Json) -> None:
        self.go.setEnabled(True)
        self.progress.setVisible(False)
        done = import_report(report)
        self.summary.setText(describe_import(done))
        self.fit_text()
        first = next(iter(done["imported"] or done["updated"]), None)
        if first is not None:
            self.window_.select_session(first)


def describe_import(report: ImportReport) -> str:
    """One paragraph a person reads after an import."""
    parts = [f"{len(report['imported'])} sessions imported"]
    if report["updated"]:
        parts.append(f"{len(report['updated'])} brought up to date")
    if report["unchanged"]:
        parts.append(f"{len(report['unchanged'])} already here and unchanged")
    text = ", ".join(parts) + "."
    if report["unmapped"]:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(report["unmapped"].items()))
        text += f" Kept as-is, with no Forkwise equivalent: {kinds}."
    failed = report["failed"]
    if failed:
        text += f"\n{len(failed)} file(s) could not be imported:" + failure_lines(failed)
    return text


class SourcesDialog(QDialog):
    """Which agents' folders the app keeps up with."""

    def __init__(self, window: Bench) -> None:
        super().__init__(window.widget())
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
