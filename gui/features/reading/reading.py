"""Find in the open session (Ctrl+F, F3 / Shift+F3), Edit → Show reasoning (every
reasoning open), File → Export session… (Markdown or
HTML, written by the host through the client's `export_session`, the one export path the
CLI also takes), and Copy as Markdown on a message."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from forkwise.core.reading import DOCUMENTS
from forkwise.core.reading.entries import APPROVAL, FORK
from forkwise.gui.shell.bench import ActionSpec, MenuId, Place
from forkwise.gui.shell.menus import keys
from forkwise.gui.transcript.find_bar import FindBar

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench
    from forkwise.gui.transcript.transcript_view import TranscriptView

#: what the export dialog offers, by document format
FILTERS = {"markdown": "Markdown (*.md)", "html": "HTML, one self-contained file (*.html)"}


class Reading:
    """The find bar, the export dialog and the message menu's Copy as Markdown."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.bar: FindBar | None = None
        self.exported = ""  # the last document written
        edit, file = MenuId.EDIT, MenuId.FILE
        bench.add_action(ActionSpec(
            "actionFindInSession", "Find in &session…", "Find words in the open session",
            keys(QKeySequence.StandardKey.Find, "Ctrl+F"), (Place(edit, 0, 5),),
            lambda: self.find_bar().open()))
        bench.add_action(ActionSpec(
            "actionFindNext", "Find &next", "The next match in the session",
            keys(QKeySequence.StandardKey.FindNext, "F3"), (Place(edit, 0, 6),),
            lambda: self.find_bar().find_next()))
        bench.add_action(ActionSpec(
            "actionFindPrevious", "Find p&revious", "The previous match in the session",
            keys(QKeySequence.StandardKey.FindPrevious, "Shift+F3"), (Place(edit, 0, 7),),
            lambda: self.find_bar().find_previous()))
        self.reasoning_action: QAction = bench.add_action(ActionSpec(
            "actionShowReasoning", "Sh&ow reasoning",
            "Every reasoning of the session open, or each folded to a line",
            "Ctrl+Shift+R", (Place(edit, 1, 0),), self.show_reasoning))
        self.reasoning_action.setCheckable(True)
        self.export_action: QAction = bench.add_action(ActionSpec(
            "actionExportSession", "&Export session…",
            "Write the selected session as a Markdown or HTML document", "Ctrl+Shift+E",
            (Place(file, 0, 20),), self.export, needs_session=True))
        bench.on_transcript(self.wire_transcript)

    def wire_transcript(self, view: TranscriptView) -> None:
        view.add_menu_contributor(self.copy_markdown_entry)

    def show_reasoning(self) -> None:
        self.bench.transcript.show_reasoning(self.reasoning_action.isChecked())

    def find_bar(self) -> FindBar:
        if self.bar is None:
            self.bar = FindBar(self.bench.transcript, self.bench.widget())
            self.bench.add_detail_line(self.bar)
        return self.bar

    # --- export -------------------------------------------------------------------

    def export(self) -> None:
        """Ask where to write the document (Markdown or HTML by the chosen filter or the
        name's suffix), then have the host write it."""
        sid = self.bench.selected_session()
        if sid is None:
            return
        dialog = QFileDialog(self.bench.widget(), "Export session")
        dialog.setObjectName("exportDialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # the same on every desktop
        dialog.setNameFilters(list(FILTERS.values()))
        dialog.selectNameFilter(FILTERS["html"])
        dialog.setDefaultSuffix("html")
        row = self.bench.controller.tree.summary(sid)
        title = (row["title"] or sid) if row is not None else sid
        dialog.selectFile(f"{safe_name(title)}.html")
        dialog.filterSelected.connect(lambda chosen: dialog.setDefaultSuffix(
            "md" if chosen == FILTERS["markdown"] else "html"))
        dialog.fileSelected.connect(lambda path: self.write(sid, path, dialog.selectedNameFilter()))
        dialog.open()

    def write(self, sid: str, path: str, name_filter: str = "") -> None:
        fmt = document_format(path, name_filter)
        c = self.bench.controller

        def done(made: Any) -> None:
            self.exported = str(made.get("path") or path)
            self.bench.widget().statusBar().showMessage(f"Exported to {self.exported}", 8000)

        c.ops.run(c.client.export_session(sid, fmt, path), done, what="Exporting the session")

    # --- the message menu ---------------------------------------------------------

    def copy_markdown_entry(self, menu: QMenu, row: int, _enabled: bool) -> None:
        entry = self.bench.transcript.transcript().entry(row)
        if entry is None or entry.kind in (APPROVAL, FORK):
            return
        from forkwise.core.reading.markdown_doc import entry_markdown

        act = menu.addAction("Copy as &Markdown")
        act.setObjectName("actionCopyMarkdown")
        act.triggered.connect(lambda: self.bench.copy_text(entry_markdown(entry)))


def document_format(path: str, name_filter: str = "") -> str:
    """The format a file is written in: by its suffix, else by the filter chosen."""
    suffix = Path(path).suffix.lower()
    for fmt, known in DOCUMENTS.items():
        if suffix == known or (fmt == "markdown" and suffix == ".markdown"):
            return fmt
    return "markdown" if name_filter == FILTERS["markdown"] else "html"


def safe_name(title: str) -> str:
    """A title as a file name: path separators and control characters out."""
    name = "".join(ch if ch.isprintable() and ch not in '/\\:*?"<>|' else " " for ch in title)
    return " ".join(name.split())[:80] or "session"


def install(bench: Bench) -> Reading:
    return Reading(bench)
