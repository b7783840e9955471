"""What Edit → Undo takes back while the app runs: the last deletes and renames, newest
first. A feature that does an undoable thing records how to take it back (`push`); the
Undo action (the housekeeping feature's) runs the newest record. Nothing is kept across
runs: a deleted session stays in the store's Trash, where Session → Trash… finds it.

Signals: `changed()` — a record came or went (the action's text and state follow).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

#: records kept; older ones drop off (a delete stays in the Trash all the same)
LIMIT = 50


@dataclass(frozen=True)
class UndoRecord:
    #: what is undone, for the action's text: "Undo delete of “…”"
    text: str
    undo: Callable[[], None]
    #: the session it concerns
    session_id: str
    #: what was done: "delete", "rename"
    kind: str


class UndoHistory(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._records: list[UndoRecord] = []

    def push(self, text: str, undo: Callable[[], None], session_id: str, kind: str) -> None:
        self._records.append(UndoRecord(text, undo, session_id, kind))
        del self._records[:-LIMIT]
        self.changed.emit()

    def latest(self) -> UndoRecord | None:
        return self._records[-1] if self._records else None

    def undo(self) -> bool:
        """Take back the newest record; False when there is none."""
        if not self._records:
            return False
        record = self._records.pop()
        self.changed.emit()
        record.undo()
        return True

    def discard(self, session_id: str, kind: str) -> None:
        """Drop the newest record of `kind` for `session_id` (it was undone another way:
        the banner's Undo)."""
        for i in range(len(self._records) - 1, -1, -1):
            record = self._records[i]
            if (record.session_id, record.kind) == (session_id, kind):
                del self._records[i]
                self.changed.emit()
                return
