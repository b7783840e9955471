"""Streamed text as `session/delta` notes: coalesced to about one note per frame."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from forkwise.core.notifications import SESSION_DELTA, SessionDelta
from forkwise.core.runtime.fresh_notes import fresh

Json = dict[str, Any]

#: streamed text goes out at most once per this many seconds (about one frame)
DELTA_INTERVAL = 0.016


class DeltaStream:
    """Streamed text of one step, sent as `session/delta` notes: a piece goes out at once
    when none went out in the last DELTA_INTERVAL seconds; pieces that come faster are
    joined and sent when the interval is over (or at `flush`). A fast model costs a few
    notes per step instead of one per token; a slow one still streams piece by piece."""

    def __init__(
        self, notify: Callable[[SessionDelta], None], session_id: str, turn: str
    ) -> None:
        self._notify = notify
        self._session_id = session_id
        self._turn = turn
        self._loop = asyncio.get_running_loop()
        self._pending: list[str] = []
        self._sent_at = -DELTA_INTERVAL
        self._timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        self._pending.append(text)
        due = self._sent_at + DELTA_INTERVAL
        if self._loop.time() >= due:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_at(due, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._sent_at = self._loop.time()
        note: SessionDelta = {
            "kind": SESSION_DELTA,
            "sessionId": self._session_id,
            "turn": self._turn,
            "text": text,
        }
        self._notify(fresh(note))
