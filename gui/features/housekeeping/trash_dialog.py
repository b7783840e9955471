"""Session → Trash…: the deleted sessions the store keeps, to bring one back (Restore) or
let them all go for good (Empty Trash, after a question). Every call goes through the
client (`trash.list`, `session.restore`, `trash.empty`), the verbs `forkwise sessions
trash` and `sessions restore` use too.

A fork is named as the list names it ("<source title> — fork N"), from its row as it
was when deleted and the list's rows for its source; deleted forks keep their numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.rows import SessionRow, session_row
from forkwise.core.client.titles import display_title
from forkwise.gui.models.session_rows import format_when

if TYPE_CHECKING:
    from forkwise.core.client.api import Json
    from forkwise.gui.kernel.controller import Controller

TITLE, DELETED = 0, 1


class TrashDialog(QDialog):
    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setObjectName("trashDialog")
        self.setWindowTitle("Trash")
        self.resize(640, 360)
        self.rows: list[SessionRow] = []
        lay = QVBoxLayout(self)
        self.note = QLabel(self)
        self.note.setObjectName("trashNote")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        self.list = QTreeWidget(self)
        self.list.setObjectName("trashList")
        self.list.setAccessibleName("Deleted sessions")
        self.list.setHeaderLabels(["Title", "Deleted"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(TITLE, self.list.header().ResizeMode.Stretch)
        self.list.itemSelectionChanged.connect(self._selection_changed)
        self.list.itemDoubleClicked.connect(lambda *_a: self.restore())
        lay.addWidget(self.list, 1)
        buttons = QDialogButtonBox(self)
        self.restore_button = QPushButton("&Restore", self)
        self.restore_button.setObjectName("trashRestore")
        self.restore_button.setToolTip("Put the selected sessions back in the list")
        self.restore_button.clicked.connect(self.restore)
        self.empty_button = QPushButton("&Empty Trash…", self)
        self.empty_button.setObjectName("trashEmpty")
        self.empty_button.setToolTip("Delete every session in the trash for good")
        self.empty_button.clicked.connect(self.ask_empty)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.empty_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay.addWidget(buttons)
        self.confirm: QMessageBox | None = None
        self._fill([])

    # --- what it shows ----------------------------------------------------------------

    def reload(self) -> None:
        c = self.controller
        c.ops.run(c.client.list_trash(), self._fill, what="Reading the trash")

    def title_of(self, sid: str) -> str:
        """What the list would call it: its own row, its source's from the list."""
        mine = {row["id"]: row for row in self.rows}
        tree = self.controller.tree

        def summary(s: str) -> SessionRow | None:
            return mine.get(s) or tree.summary(s)

        def children_of(s: str | None) -> list[str]:
            # the deleted count among their source's forks: numbered as they were
            kept = [k for k, row in mine.items() if row["parentSession"] == s]
            return [*tree.children_of(s), *kept]

        return display_title(sid, summary, children_of, asked=tree.questions.get)

    def _fill(self, rows: list[Json]) -> None:
        self.rows = [session_row(r) for r in rows]
        deleted = {str(r["id"]): str(r.get("deletedAt") or "") for r in rows}
        self.list.clear()
        for row in self.rows:
            sid = row["id"]
            item = QTreeWidgetItem([self.title_of(sid), format_when(deleted[sid])])
            item.setData(TITLE, Qt.ItemDataRole.UserRole, sid)
            item.setToolTip(TITLE, f"{self.title_of(sid)}\nid: {sid}")
            self.list.addTopLevelItem(item)
        count = len(self.rows)
        self.note.setText(
            "The trash is empty." if not count else
            f"{count} deleted session{'s' if count != 1 else ''}. Restore puts a session "
            "back in the list; Empty Trash deletes them for good.")
        self.empty_button.setEnabled(bool(count))
        first = self.list.topLevelItem(0)
        if first is not None:
            self.list.setCurrentItem(first)
        self._selection_changed()

    def _selection_changed(self) -> None:
        self.restore_button.setEnabled(bool(self.selected()))

    def selected(self) -> list[str]:
        return [str(item.data(TITLE, Qt.ItemDataRole.UserRole))
                for item in self.list.selectedItems()]

    # --- verbs ------------------------------------------------------------------------

    def restore(self) -> None:
        c = self.controller
        for sid in self.selected():
            def restored(row: Json, sid: str = sid) -> None:
                c.apply_row(row)
                c.notifier.info(f"“{self.title_of(sid)}” is back.")
                self.reload()

            c.ops.run(c.client.restore_session(sid), restored, what="Restoring the session")

    def ask_empty(self) -> None:
        count = len(self.rows)
        box = QMessageBox(QMessageBox.Icon.Warning, "Empty Trash",
                          f"Delete the {count} session{'s' if count != 1 else ''} in the "
                          "trash for good? This cannot be undone.",
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("emptyTrashQuestion")
        empty = box.addButton("Empty Trash", QMessageBox.ButtonRole.DestructiveRole)
        empty.setObjectName("confirmEmptyTrash")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered(button: object) -> None:
            if button is empty:
                self.empty()

        box.buttonClicked.connect(answered)
        self.confirm = box
        box.open()

    def empty(self) -> None:
        c = self.controller

        def emptied(result: Json) -> None:
            gone = len(result.get("removed") or [])
            c.notifier.info(f"{gone} deleted session{'s' if gone != 1 else ''} removed "
                            "for good.")
            self.reload()

        c.ops.run(c.client.empty_trash(), emptied, what="Emptying the trash")
