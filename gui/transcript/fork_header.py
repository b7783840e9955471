"""The fork record at the top of a child's own events: where it came from, its siblings
(step between forks of the same point: "2/3" between arrows), and — when its source was rewritten
below the fork point since — a warning with a link to compare the two.

A real widget (set as the row's index widget), so links and buttons are reachable by
keyboard and assistive tools.

Signals: `sourceRequested(session_id)`, `stepRequested(delta)` (-1 or +1),
`compareRequested()`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from forkwise.core.reading.entries import ASSISTANT, USER

if TYPE_CHECKING:
    from forkwise.core.reading.entries import Entry

CHANGED_TEXT = "Its source changed since this fork"


class ForkHeader(QWidget):
    sourceRequested = Signal(str)
    stepRequested = Signal(int)
    compareRequested = Signal()

    def __init__(self, source: str, title: str, point: str, parent: QWidget | None = None,
                 *, margins: tuple[int, int] = (0, 0), subagent: bool = False,
                 continued: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("forkHeader")
        self.source = source
        side, top = margins
        outer = QVBoxLayout(self)
        outer.setContentsMargins(side, top, side, top)
        outer.setSpacing(4)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.link = QLabel(self)
        self.link.setObjectName("forkLink")
        self.title, self.subagent, self.continued = title, subagent, continued
        self.set_point(point)
        self.link.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.link.setWordWrap(True)
        self.link.linkActivated.connect(self._link)
        row.addWidget(self.link, 1)
        self.previous = self._button("siblingPrevious", "\u2039", "Previous fork of this point", -1)
        self.where = QLabel(self)
        self.where.setObjectName("siblingPosition")
        self.next = self._button("siblingNext", "\u203a", "Next fork of this point", +1)
        for widget in (self.previous, self.where, self.next):
            row.addWidget(widget)
        outer.addLayout(row)
        self.changed = QLabel(self)
        self.changed.setObjectName("sourceChanged")
        self.changed.setText(f'⚠ {CHANGED_TEXT} — <a href="compare:">compare</a>')
        self.changed.setAccessibleName(f"{CHANGED_TEXT}; activate to compare")
        self.changed.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.changed.setStyleSheet("color: #b36b00")
        self.changed.linkActivated.connect(self._link)
        outer.addWidget(self.changed)
        #: what the prefix shared with the source used (`set_shared`)
        self.shared = QLabel(self)
        self.shared.setObjectName("sharedPrefix")
        self.shared.setStyleSheet("color: palette(placeholder-text)")
        outer.addWidget(self.shared)
        self.set_shared(None)
        self.set_position(None)
        self.set_changed(False)

    def _button(self, name: str, text: str, tip: str, delta: int) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setAutoRaise(True)
        font = button.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        button.setFont(font)
        button.clicked.connect(lambda: self.stepRequested.emit(delta))
        return button

    @property
    def gone(self) -> bool:
        """No row names the source: deleted (or in the trash), nothing to open."""
        return self.title == self.source

    def set_point(self, point: str) -> None:
        """Where the fork was cut, in words (`fork_point`): "at …", "after …" or
        "before …" (a message it was cut before, whose text may arrive later)."""
        # a subagent was started by its session (the tree's tooltip says so too), and one
        # that shares none of its history was not cut anywhere: no "at the beginning"
        # a session continued in an agent (a Continue in read back) shares none either
        verb = "Subagent started by" if self.subagent else "Forked from"
        if self.continued:
            verb = "Continued from"
        if (self.subagent or self.continued) and point == "at the beginning":
            where = ""
        else:
            where = f" {point}"
        if self.gone:
            self.link.setText(f"<b>{verb}</b> a session no longer in the store"
                              f"{html.escape(where)}")
            self.link.setToolTip(f"id: {self.source}")
            self.link.setAccessibleName(f"{verb} a session no longer in the store{where}")
        else:
            self.link.setText(f'<b>{verb}</b> <a href="session:{html.escape(self.source)}">'
                              f"{html.escape(self.title)}</a>{html.escape(where)}")
            self.link.setAccessibleName(
                f"{verb} {self.title}{where}; activate to show the source")

    def set_position(self, place: tuple[int, int] | None) -> None:
        """The arrows and k/n where the child has siblings; hidden where it has none."""
        shown = place is not None
        for widget in (self.previous, self.where, self.next):
            widget.setVisible(shown)
        if place is not None:
            k, n = place
            self.where.setText(f"{k}/{n}")
            self.where.setAccessibleName(f"Version {k} of {n} at this point")
            self.previous.setEnabled(k > 1)
            self.next.setEnabled(k < n)

    def set_changed(self, changed: bool) -> None:
        self.changed.setVisible(changed)

    def set_shared(self, text: str | None) -> None:
        """The tokens and cost of the prefix shared with the source ("shared prefix $…"),
        counted once in the lineage; hidden while unknown or empty."""
        self.shared.setText(text or "")
        self.shared.setAccessibleName(text or "")
        self.shared.setVisible(bool(text))

    def _link(self, href: str) -> None:
        if href.startswith("session:"):
            self.sourceRequested.emit(href[len("session:"):])
        elif href.startswith("compare:"):
            self.compareRequested.emit()


def fork_point(entry: Entry, text_of: Callable[[str], str | None] = lambda _m: None,
               above: tuple[str, str] | None = None,
               kind_of: Callable[[str], str | None] = lambda _m: None) -> str:
    """Where a fork was cut, in the words of the conversation: "at your question “…”",
    "before your question “…”" (Fork before, Edit and resend: the message is not in the
    child; its words come from the source, `anchor_text`), "after the answer “…”". The
    anchor message's words where known (`text_of`, its kind `kind_of`); a fork with no
    anchor (an imported Claude Code rewind, Codex fork, pi branch) by the last message
    copied above it, `above` (its kind and text). An event number told a person nothing
    ("(event 38)"): it is said only when no message is known."""
    fork = entry.fork
    anchor, boundary, before = fork.anchor_message, fork.boundary, fork.before

    def words(text: str) -> str:
        text = text.strip().replace("\n", " ")
        return text if len(text) <= 60 else text[:57].rstrip() + "…"

    if anchor:
        text = (text_of(str(anchor)) or "").strip()
        if not text:  # not the message's id: no one reads "user:we-want-to:546d"
            return f"{'before' if before else 'at'} a message"
        # a fork cut before a message is cut before a question (it opens the turn)
        kind = USER if before else kind_of(str(anchor))
        return f"{'before' if before else 'at'} {_noun(kind)} “{words(text)}”"
    if boundary and above and above[1].strip():
        kind, text = above
        where = "after" if kind == ASSISTANT else "at"
        return f"{where} {_noun(kind)} “{words(text)}”"
    return f"at event {boundary}" if boundary else "at the beginning"


def _noun(kind: str | None) -> str:
    return {USER: "your question", ASSISTANT: "the answer"}.get(kind or "", "the message")
