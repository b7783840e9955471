"""The session list and the transcript share a smaller window: the list gives up width
down to `LIST_FLOOR` before the transcript goes under `TRANSCRIPT_COMFORT`, and takes it
back when the window grows again. (The list kept its width and the transcript took every
pixel of a shrink: at 700 px wide, 440 px of list beside a 240 px transcript.) Only a
window resize moves the panes; where the person drags the handle is what the list wants.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QSplitter

#: the transcript's width below which the list gives way
TRANSCRIPT_COMFORT = 440
#: the list's width it does not give below: Title keeps its room (tree_columns) beside Last
#: activity
LIST_FLOOR = 300


def balanced(sizes: list[int], wanted: int) -> list[int]:
    """[list, transcript] widths for these `sizes` of the two panes, the list wanting
    `wanted`: it gives way down to LIST_FLOOR for the transcript's comfort, and takes back
    up to `wanted` what the transcript can spare above it."""
    left, right = sizes
    if right < TRANSCRIPT_COMFORT and left > LIST_FLOOR:
        move = min(TRANSCRIPT_COMFORT - right, left - LIST_FLOOR)
        return [left - move, right + move]
    if left < wanted and right > TRANSCRIPT_COMFORT:
        move = min(wanted - left, right - TRANSCRIPT_COMFORT)
        return [left + move, right - move]
    return [left, right]


class PaneBalance(QObject):
    """Watches `splitter` (two panes: the list, then the transcript)."""

    def __init__(self, splitter: QSplitter) -> None:
        super().__init__(splitter)
        self.splitter = splitter
        self.wanted = max(splitter.sizes()[0], LIST_FLOOR)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.balance)
        splitter.splitterMoved.connect(self._moved)
        splitter.installEventFilter(self)

    def _moved(self, _pos: int, _index: int) -> None:
        self.wanted = self.splitter.sizes()[0]  # the person's choice

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            self._timer.start()  # once the splitter has laid its panes out at the new size
        return False

    def balance(self) -> None:
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and min(sizes) > 0:
            wanted = balanced(sizes, self.wanted)
            if wanted != sizes:
                self.splitter.setSizes(wanted)
