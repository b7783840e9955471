"""The composer: where a person types the next prompt (or edits one to resend).

Enter sends, Shift+Enter starts a new line, Stop cancels the running turn. The text stays
in the box until the host accepted it, so nothing typed is lost on an error.

Signals: `sendRequested(text)`, `stopRequested()`, `editCancelled()`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget


class PromptEdit(QPlainTextEdit):
    """Enter submits; Shift+Enter (or Ctrl+Enter) inserts a newline; Esc leaves edit mode."""

    submitted = Signal()
    escaped = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            event.accept()
            return
        if key == Qt.Key.Key_Escape:
            self.escaped.emit()
        super().keyPressEvent(event)


class Composer(QWidget):
    sendRequested = Signal(str)
    stopRequested = Signal()
    editCancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerBox")
        self.edit = PromptEdit(self)
        self.edit.setObjectName("composer")
        self.edit.setAccessibleName("Message")
        self.edit.setAccessibleDescription("Type a message; Enter sends, Shift+Enter adds a line")
        self.edit.setPlaceholderText("Message the agent — Enter sends, Shift+Enter for a new line")
        self.edit.setTabChangesFocus(True)
        self.edit.setFixedHeight(78)
        self.mode_label = QLabel(self)
        self.mode_label.setObjectName("composerMode")
        self.mode_label.hide()
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName("Send message")
        self.send_button.setDefault(False)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName("Stop the running turn")
        self.stop_button.setToolTip("Cancel the running turn")
        self.stop_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addLayout(buttons)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 4, 8, 8)
        outer.addWidget(self.mode_label)
        outer.addLayout(row)
        self.editing_message: str | None = None
        self.replacing = False  # the edit replaces in place (else: a new branch)
        self.edit.submitted.connect(self.submit)
        self.edit.escaped.connect(self.cancel_edit)
        self.send_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(self.stopRequested)
        self.set_session(None)

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)
        cursor = self.edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.edit.setTextCursor(cursor)

    def submit(self) -> None:
        text = self.text().strip()
        if text and self.edit.isEnabled():
            self.sendRequested.emit(text)

    def sent(self) -> None:
        """The host accepted the text: clear the box (and leave edit mode)."""
        self.edit.clear()
        self._leave_edit()

    def set_session(self, session_id: str | None, blocked: str | None = None) -> None:
        """Write to `session_id` (None: no session is open), unless `blocked` says why
        nothing can be written to it."""
        enabled = session_id is not None and blocked is None
        self.edit.setEnabled(enabled)
        self.send_button.setEnabled(enabled)
        if blocked is not None:
            self.edit.setPlaceholderText(blocked)
        elif not enabled:
            self.edit.setPlaceholderText("Open or create a session to write to it")
        else:
            self.edit.setPlaceholderText(
                "Message the agent — Enter sends, Shift+Enter for a new line"
            )
        self._leave_edit()

    def set_running(self, running: bool, elsewhere: str | None = None) -> None:
        """Stop is enabled while a turn runs here; `elsewhere` says why not (the turn is
        written by another program) and is Stop's tooltip then."""
        self.stop_button.setEnabled(running and elsewhere is None)
        self.stop_button.setToolTip(elsewhere or "Cancel the running turn")

    def begin_edit(self, message_id: str, text: str, replace: bool = False) -> None:
        """Edit mode: sending resends `message_id` edited — in a new branch, or with
        `replace` in place (it and what follows it are deleted)."""
        self.editing_message = message_id
        self.replacing = replace
        self.mode_label.setText(
            "Editing in place: Enter deletes this message and everything after it, "
            "then sends; Esc cancels"
            if replace else
            "Editing a message: Enter sends it in a new branch (this session stays as it "
            "is); Esc cancels"
        )
        self.mode_label.setWordWrap(True)
        self.mode_label.show()
        self.send_button.setText("Replace" if replace else "Resend")
        self.set_text(text)
        self.edit.setFocus()

    def cancel_edit(self) -> None:
        if self.editing_message is not None:
            self.edit.clear()
            self._leave_edit()
            self.editCancelled.emit()

    def _leave_edit(self) -> None:
        self.editing_message = None
        self.replacing = False
        self.mode_label.hide()
        self.send_button.setText("Send")
