"""Two sessions of one lineage side by side, from their last common event.

The shared prefix is one line at the top; below it the diverging turns of each session,
turn beside turn (forkwise.core.reading.compare aligns them), with tool calls and results. A window
of its own (object name `compareView`), opened with `show()`, never modal.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.reports import usage_part
from forkwise.core.reading.compare import Block, Comparison
from forkwise.gui.models.session_costs import part_line, token_count

_DIM = "color: #5f6b76"  # readable grey on light and on dark cards
_STYLE = {
    "user": "font-weight: bold",
    "tool": "font-family: monospace",
    "result": "font-family: monospace",
    "approval": _DIM,
    "end": f"{_DIM}; font-size: small",
    "note": _DIM,
}


def block_html(block: Block) -> str:
    out = []
    for kind, text in block.lines:
        style = _STYLE.get(kind, "")
        body = html.escape(text).replace("\n", "<br>")
        out.append(f'<p style="margin: 0 0 4px 0; {style}">{body}</p>')
    return "".join(out)


class CompareView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("compareView")
        self.setAccessibleName("Compare two sessions")
        self.setWindowTitle("Compare sessions")
        self.resize(1000, 680)
        # a window of its own, not a dialog: Escape (and Close's keys) close it as one would
        close = QAction("Close", self)
        close.setObjectName("actionCloseCompare")
        close.setShortcuts([QKeySequence(Qt.Key.Key_Escape),
                            *QKeySequence.keyBindings(QKeySequence.StandardKey.Close)])
        close.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        close.triggered.connect(self.close)
        self.addAction(close)
        self.left_title = self._label("compareLeftTitle", bold=True)
        self.right_title = self._label("compareRightTitle", bold=True)
        #: each side's own tokens and cost, after the shared prefix
        self.left_usage = self._label("compareLeftUsage")
        self.right_usage = self._label("compareRightUsage")
        self.shared = self._label("compareShared")
        self.shared.setFrameShape(QFrame.Shape.StyledPanel)
        self.shared.setContentsMargins(8, 4, 8, 4)
        self.shared.setAccessibleName("What the two sessions have in common")
        heads = QGridLayout()
        heads.addWidget(self.left_title, 0, 0)
        heads.addWidget(self.right_title, 0, 1)
        heads.addWidget(self.left_usage, 1, 0)
        heads.addWidget(self.right_usage, 1, 1)
        heads.setColumnStretch(0, 1)
        heads.setColumnStretch(1, 1)
        self.body = QWidget(self)
        self.body.setObjectName("compareBody")
        self.grid = QGridLayout(self.body)
        self.grid.setColumnStretch(0, 1)
        self.grid.setColumnStretch(1, 1)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea(self)
        scroll.setObjectName("compareScroll")
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        layout = QVBoxLayout(self)
        layout.addLayout(heads)
        layout.addWidget(self.shared)
        layout.addWidget(scroll, 1)
        self.cells: list[tuple[QLabel, QLabel]] = []
        self.comparison: Comparison | None = None
        self.sessions: tuple[str, str] = ("", "")

    def _label(self, name: str, *, bold: bool = False) -> QLabel:
        label = QLabel(self)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        if bold:
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        return label

    def show_comparison(self, left: tuple[str, str], right: tuple[str, str],
                        comparison: Comparison) -> None:
        """`left`/`right`: (session id, title). Replaces what was shown."""
        self.sessions = (left[0], right[0])
        self.comparison = comparison
        self.setWindowTitle(f"Compare: {left[1]} ↔ {right[1]}")
        self.left_title.setText(left[1])
        self.right_title.setText(right[1])
        self.left_title.setToolTip(f"id: {left[0]}")
        self.right_title.setToolTip(f"id: {right[0]}")
        self.shared.setText(comparison.shared_line())
        usage = ([usage_part(p) for p in comparison.usage]
                 if comparison.usage is not None else None)
        for label, part in ((self.left_usage, usage[1] if usage else None),
                            (self.right_usage, usage[2] if usage else None)):
            label.setText(f"Own: {part_line(part)}" if usage else "")
            label.setVisible(usage is not None)
        if usage is not None and token_count(usage[0]):
            self.shared.setText(f"{comparison.shared_line()}\n"
                                f"Shared, counted once: {part_line(usage[0])}")
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.cells = []
        for row, (a, b) in enumerate(comparison.rows):
            pair = (self._cell(a, left[1], row), self._cell(b, right[1], row))
            self.grid.addWidget(pair[0], row, 0)
            self.grid.addWidget(pair[1], row, 1)
            self.cells.append(pair)
        if not comparison.rows:
            same = QLabel("Nothing after the common part: the two sessions end alike.", self.body)
            same.setObjectName("compareSame")
            self.grid.addWidget(same, 0, 0, 1, 2)

    def _cell(self, block: Block | None, title: str, row: int) -> QLabel:
        cell = QLabel(self.body)
        cell.setObjectName("compareCell")
        cell.setWordWrap(True)
        cell.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        cell.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        cell.setMargin(8)
        if block is None:
            cell.setText(f'<p style="{_DIM}"><i>(nothing here)</i></p>')
            cell.setAccessibleName(f"{title}: nothing in this place")
        else:
            cell.setText(block_html(block))
            cell.setAccessibleName(f"{title}, part {row + 1}: {block.text[:300]}")
            cell.setFrameShape(QFrame.Shape.StyledPanel)
        return cell

    def column_text(self, column: int) -> list[str]:
        """Each row's plain text in one column (tests and accessibility read this)."""
        rows = self.comparison.rows if self.comparison else []
        return [block.text if block is not None else "" for block in (p[column] for p in rows)]
