"""Where forks continue from, seen in their source: under the row a fork was cut after,
a link to it ("Continued in a fork: …", with the tree's fork badge), or to a list of them
when there are several — as ChatGPT shows "< 1/3 >" on the message that was edited, and
pi's /tree the points a session branches at. Read from the tree's rows (a fork's
`seedLength`), nothing is asked of the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMenu, QWidget

from forkwise.gui.domain.siblings import forks_of
from forkwise.gui.widgets.badges import badge_icon
from forkwise.gui.widgets.foot_link import FootLink, short_title

if TYPE_CHECKING:
    from forkwise.gui.kernel.controller import Controller


class ForkMark(FootLink):
    """A link to the fork (or the forks) cut right after its row."""

    def __init__(self, forks: list[str], title_of: dict[str, str], parent: QWidget) -> None:
        first = forks[0]
        if len(forks) == 1:
            text = f"Continued in a fork: {short_title(title_of[first])}"
        else:
            text = f"Continued in {len(forks)} forks from here…"
        super().__init__(first, text, parent)
        self.forks = list(forks)
        self.setObjectName("forkMark")
        self.setAccessibleName(text)
        self.setIcon(badge_icon("fork"))  # the tree's fork badge (no font has ⑂ here)
        self.setToolTip("Open the fork that continues from here (Enter)" if len(forks) == 1
                        else "Choose a fork that continues from here (Enter)")
        if len(forks) > 1:
            menu = QMenu(self)
            menu.setObjectName("forkMarkMenu")
            for sid in forks:
                action = menu.addAction(title_of[sid])
                action.setObjectName(f"openFork:{sid}")
                action.triggered.connect(lambda _=False, s=sid: self.opened.emit(s))
            self.choices = menu


def forks_at(c: Controller, row: int) -> list[str]:
    """The forks of the opened session cut right after the entry at `row` (their
    boundary is at or after it and before the next entry), oldest first."""
    model = c.transcript
    entry = model.entry(row)
    if c.current is None or entry is None or entry.seq <= 0:
        return []
    following = model.entry(row + 1)
    if following is not None:
        end = following.seq
    elif model.at_end:
        end = 1 << 62  # the last row: every later point of the log is here
    else:
        end = model.loaded_seq + 1
    if end <= entry.seq:
        return []  # a row of the same event follows: the mark goes under that one
    tree = c.tree
    out = []
    for sid in forks_of(c.current, tree.summary, tree.children_of):
        fork = tree.summary(sid)
        point = fork["seedLength"] if fork is not None else None
        if isinstance(point, int) and entry.seq <= point < end:
            out.append(sid)
    return out

