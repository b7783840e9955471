"""What a `SessionStore` keeps of a loaded session: its header, log, turn rules, row, and
the lock one change to it at a time holds (shared by the store and its append phases,
`appending.py`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from forkwise.core.log.event_log import EventLog
from forkwise.core.log.ids import random_hex
from forkwise.core.log.turns import BracketState
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import Session, SessionHeader, SessionSummary


@dataclass
class Record:
    header: SessionHeader
    events: EventLog
    state: BracketState
    summary: SessionSummary
    generation: str = field(default_factory=lambda: random_hex(6))
    torn_tail: bytes | None = None
    #: the point of a completed turn of this log (not always the last one), if known
    point: ForkPoint | None = None
    #: held while the session is being changed (see SessionStore._writing)
    writing: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> Session:
        return Session(self.header, self.events.view(), self.generation)
