"""The session list and the transcript share the window: until the person drags the
handle between them, the list has its fair share of the window's width (`fair_share`: at
1920 px it kept 500 px, and the Cost column took the Messages column's room); once
dragged, where the person put it is what the list wants. In a smaller window the list
gives up width down to `LIST_FLOOR` before the transcript goes under
`TRANSCRIPT_COMFORT`, and takes it back when the window grows again. (The list kept its
width and the transcript took every pixel of a shrink: at 700 px wide, 440 px of list
beside a 240 px transcript.) Only a window resize moves the panes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QSplitter

#: the transcript's width below which the list gives way
TRANSCRIPT_COMFORT = 440
#: the list's width it does not give below: Title keeps its room (tree_columns) beside Last
#: activity
LIST_FLOOR = 300
#: the list's width in a window of the default size (1280 px) and below
LIST_WIDTH = 500
#: the list's share of a wider window, and the most it takes unasked
LIST_SHARE, LIST_MOST = 0.34, 720


def fair_share(window_width: int) -> int:
    """The list's width in a window `window_width` wide, until the person sets it: 500 px
    up to the default 1280 px window, a third of a wider one (650 px at 1920), 720 px at
    most (the transcript's cards are capped in width; the rest is the list's to use)."""
    return max(LIST_WIDTH, min(LIST_MOST, round(window_width * LIST_SHARE)))


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

    def __init__(self, splitter: QSplitter, chosen: bool = False) -> None:
        """`chosen`: the person set the list's width (its current one) in an earlier run."""
        super().__init__(splitter)
        self.splitter = splitter
        self.chosen = chosen
        self.wanted = max(splitter.sizes()[0], LIST_FLOOR)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.balance)
        splitter.splitterMoved.connect(self._moved)
        splitter.installEventFilter(self)

    def _moved(self, _pos: int, _index: int) -> None:
        self.wanted = self.splitter.sizes()[0]  # the person's choice
        self.chosen = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            self._timer.start()  # once the splitter has laid its panes out at the new size
        return False

    def balance(self) -> None:
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and min(sizes) > 0:
            if self.chosen:
                wanted = balanced(sizes, self.wanted)
            else:
                share = fair_share(sum(sizes) + self.splitter.handleWidth())
                wanted = balanced([share, sum(sizes) - share], share)
            if wanted != sizes:
                self.splitter.setSizes(wanted)
