"""Branches that look alike are named by what they asked: a fork that still carries its
source's title ("… — fork N") and has other versions at its fork point (an edit and
resend, a retry, a rewound Claude Code branch) is named after the first question it asked
of its own, "<question> — fork N" (forkwise.core.client.titles decides the name; this
reads the question).

A fork's summary row holds the first question of its whole log, its source's; the one it
asked itself comes after its seed, so a few events after it are read (`session.events`),
once per fork and again when a fork that had asked nothing yet grows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from forkwise.core.client.titles import inherited, is_fork
from forkwise.core.reading.entries import USER, build
from forkwise.gui.domain.siblings import position, siblings

if TYPE_CHECKING:
    from forkwise.gui.kernel.controller import Controller

log = logging.getLogger(__name__)
Json = dict[str, Any]
#: events read after a fork's seed for its first question (its fork record, a turn's
#: start, a model choice, then the message)
QUESTION_EVENTS = 12
#: forks asked about in one pass over the tree (the rest on the next change)
PASS_LIMIT = 200


class ForkQuestions(QObject):
    def __init__(self, controller: Controller) -> None:
        super().__init__(controller)
        self.controller = controller
        #: fork → its event count when its events were read (asked again once it grew)
        self.read_at: dict[str, int] = {}
        self._pending: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._ask_pending)
        controller.treeLoaded.connect(lambda _n: self.scan())
        controller.sessionChanged.connect(self.changed)

    def scan(self) -> None:
        """Every fork of the tree that needs its question (after a load)."""
        self._pending.update(self.controller.tree.session_ids())
        self._timer.start()

    def changed(self, sid: str) -> None:
        """A row came or changed: it, and the versions of its fork point (one more
        version makes the others need telling apart)."""
        tree = self.controller.tree
        self._pending.add(sid)
        self._pending.update(siblings(sid, tree.summary, tree.children_of))
        self._timer.start()

    def wanted(self, sid: str) -> bool:
        tree = self.controller.tree
        own = tree.summary(sid)
        if own is None or not is_fork(own) or sid in tree.questions:
            return False
        if self.read_at.get(sid, -1) >= own["events"]:
            return False  # read already, and nothing came since
        source = tree.summary(str(own["parentSession"]))
        if source is None or not inherited(own, source):
            return False  # its own title tells it apart
        return position(sid, tree.summary, tree.children_of) is not None

    def _ask_pending(self) -> None:
        wanted = [sid for sid in self._pending if self.wanted(sid)]
        self._pending.clear()
        for sid in wanted[:PASS_LIMIT]:
            self._ask(sid)
        if len(wanted) > PASS_LIMIT:
            self._pending.update(wanted[PASS_LIMIT:])
            self._timer.start()

    def _ask(self, sid: str) -> None:
        c = self.controller
        row = c.tree.summary(sid)
        if row is None:
            return
        seed = row["seedLength"] or 0
        self.read_at[sid] = row["events"]

        def landed(events: list[Json]) -> None:
            for entry in build(events).entries:
                if entry.kind == USER and entry.text.strip():
                    c.tree.set_question(sid, entry.text)
                    return

        c.ops.run(c.client.events(sid, after=seed, limit=QUESTION_EVENTS), landed,
                  lambda exc: log.info("no question read for %s: %r", sid, exc))
