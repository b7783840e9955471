"""Find in the open session: a bar with the words, the count ("3 of 12"), previous and
next. Every match in the loaded messages is marked (the transcript's delegate paints
`view.delegate.find_marks`), the current one more strongly, and it is scrolled into view. The
matches are found in the cards' own rendered text, so what is found is what is shown.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from forkwise.gui.transcript.transcript_view import TranscriptView

#: a match is (row, position in the card's text, length)
Match = tuple[int, int, int]


class FindBar(QWidget):
    """The find bar over the transcript `view`; hidden until `open()`."""

    def __init__(self, view: TranscriptView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setObjectName("findBar")
        self.setAccessibleName("Find in session")
        self.matches: list[Match] = []
        self.current = -1
        self.field = QLineEdit(self)
        self.field.setObjectName("findField")
        self.field.setPlaceholderText("Find in this session")
        self.field.setAccessibleName("Find in this session")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel("", self)
        self.count.setObjectName("findCount")
        self.previous = _button("▲", "Previous match (Shift+F3)", self.find_previous, self)
        self.next = _button("▼", "Next match (F3, Enter)", self.find_next, self)
        close = _button("✕", "Close (Escape)", self.close_bar, self)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 2, 0, 2)
        for part in (self.field, self.count, self.previous, self.next, close):
            row.addWidget(part)
        self.timer = QTimer(self)  # finding waits for a pause in the typing
        self.timer.setSingleShot(True)
        self.timer.setInterval(150)
        self.timer.timeout.connect(self.refind)
        self.field.textChanged.connect(lambda _t: self.timer.start())
        self.field.installEventFilter(self)
        model = view.model()
        if model is not None:
            model.modelReset.connect(self._changed)
            model.rowsInserted.connect(self._changed)
        self.hide()

    def open(self) -> None:
        """Show the bar with its words selected, ready for new ones."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        if self.field.text():
            self.refind()

    def close_bar(self) -> None:
        self.hide()
        self.matches, self.current = [], -1
        self.view.delegate.find_marks = {}
        self.view.viewport().update()
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _changed(self, *_args: object) -> None:
        if self.isVisible() and self.field.text():
            self.timer.start()

    def refind(self) -> None:
        """Every match of the words in the loaded messages, the first one in view
        or below it current."""
        words = self.field.text()
        self.matches = []
        model = self.view.transcript()
        if words:
            for row in range(model.rowCount()):
                doc = self.view.delegate.card_doc(model.index(row, 0))
                if doc is None:
                    continue
                cursor = doc.find(words)
                while not cursor.isNull():
                    start = cursor.selectionStart()
                    self.matches.append((row, start, cursor.selectionEnd() - start))
                    cursor = doc.find(words, cursor)
        top = self.view.indexAt(self.view.viewport().rect().topLeft()).row()
        self.current = next((i for i, m in enumerate(self.matches) if m[0] >= top),
                            0 if self.matches else -1)
        self._show()

    def find_next(self) -> None:
        self._step(1)

    def find_previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if not self.isVisible():
            self.open()
            return
        if self.matches:
            self.current = (self.current + delta) % len(self.matches)
        self._show()

    def _show(self) -> None:
        marks: dict[int, list[tuple[int, int, bool]]] = {}
        for i, (row, start, length) in enumerate(self.matches):
            marks.setdefault(row, []).append((start, length, i == self.current))
        self.view.delegate.find_marks = marks
        if not self.field.text():
            self.count.setText("")
        elif not self.matches:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{self.current + 1} of {len(self.matches)}")
            row, start, _length = self.matches[self.current]
            self.view.show_text_at(row, start)
        self.view.viewport().update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.field or event.type() != QEvent.Type.KeyPress:
            return False
        assert isinstance(event, QKeyEvent)
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            return True
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self.timer.isActive():
                self.timer.stop()
                self.refind()
            else:
                self._step(-1 if shift else 1)
            return True
        return False


def _button(text: str, tip: str, slot: object, parent: QWidget) -> QToolButton:
    button = QToolButton(parent)
    button.setText(text)
    button.setToolTip(tip)
    button.setAccessibleName(tip.split(" (", maxsplit=1)[0])
    button.clicked.connect(slot)
    return button

