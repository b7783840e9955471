"""A pending approval in the transcript: what the tool call will do, and real Approve and
Deny buttons (an index widget, reachable by keyboard and assistive tools).

Side by side with the buttons in a narrow transcript, the text kept 56 px and cut off the
very thing to be approved (`{"path":"` of `{"path":"README.md"}`): narrower than
`NARROW`, the buttons go under the text. The arguments may break after `/ , :` too (a
path or JSON has no spaces to wrap at).

Signals: `decided(approval_id, approved)`.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QPushButton, QWidget

#: below this width the buttons go under the text
NARROW = 440
#: the arguments shown (longer ones end in "…")
ARGS_SHOWN = 120
ZWSP = "\u200b"  # a place a line may break, drawn as nothing


def breakable(text: str) -> str:
    """`text` escaped, with break opportunities after the punctuation of paths and JSON."""
    out = html.escape(text)
    for mark in ("/", ",", ":"):
        out = out.replace(mark, mark + ZWSP)
    return out


class ApprovalBox(QWidget):
    decided = Signal(str, bool)

    def __init__(self, tool: str, args: str, approval: str, margins: tuple[int, int],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalBox")
        self.setAutoFillBackground(False)
        side, top = margins
        if len(args) > ARGS_SHOWN:
            args = args[:ARGS_SHOWN - 3] + "…"
        self.label = QLabel(f"<b>Approve {html.escape(tool)}?</b> "
                            f"<span>{breakable(args)}</span>", self)
        self.label.setObjectName("approvalText")
        self.label.setWordWrap(True)
        self.label.setAccessibleName(f"Approve {tool}? {args}")
        self.approve = QPushButton("Approve", self)
        self.approve.setObjectName("approveButton")
        self.approve.setAccessibleName(f"Approve {tool}")
        self.approve.clicked.connect(lambda: self.decided.emit(approval, True))
        self.deny = QPushButton("Deny", self)
        self.deny.setObjectName("denyButton")
        self.deny.setAccessibleName(f"Deny {tool}")
        self.deny.clicked.connect(lambda: self.decided.emit(approval, False))
        self.buttons = QHBoxLayout()
        self.buttons.addStretch(1)
        self.buttons.addWidget(self.approve)
        self.buttons.addWidget(self.deny)
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setContentsMargins(side, top, side, top)
        self.box.addWidget(self.label, 1)
        self.box.addLayout(self.buttons)

    @staticmethod
    def direction_for(width: int) -> QBoxLayout.Direction:
        return (QBoxLayout.Direction.TopToBottom if width < NARROW
                else QBoxLayout.Direction.LeftToRight)

    def resizeEvent(self, event: QResizeEvent) -> None:
        direction = self.direction_for(event.size().width())
        if direction != self.box.direction():
            self.box.setDirection(direction)
        super().resizeEvent(event)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        """The height at `width`, laid out as it will be at that width."""
        m = self.box.contentsMargins()
        inner = width - m.left() - m.right()
        buttons = max(self.approve.sizeHint().height(), self.deny.sizeHint().height())
        spacing = max(self.box.spacing(), 0)
        if self.direction_for(width) == QBoxLayout.Direction.TopToBottom:
            body = self.label.heightForWidth(inner) + spacing + buttons
        else:
            rest = self.buttons.sizeHint().width() + spacing
            body = max(self.label.heightForWidth(max(inner - rest, 1)), buttons)
        return body + m.top() + m.bottom()
