"""Idle is idle: once the app has brought the agents' files in and built the search index,
nothing in it fires until something happens. Counted, not timed: the timer events Qt
delivers in the app and the times the main thread was woken, over two seconds of idle.
Real Claude Code files in a watched folder, the host's own watch, import and build."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import claude_sessions, open_app, until
from PySide6.QtCore import QCoreApplication, QEvent, QObject

from forkwise.core.client.api import IMPORT_PROGRESS, SEARCH_INDEXING

pytestmark = pytest.mark.gui

#: the idle span counted, seconds
IDLE = 2.0
#: at most this many timer events over that span: an idle app has a few (its own and the
#: test's timers: ~10); the status bar's timer left running fired every millisecond
#: (~2,000)
TIMER_EVENTS_AT_MOST = 200
#: at most this many wakes of the main thread over that span (~10 when idle; ~2,000 with
#: that timer)
WAKES_AT_MOST = 400


class TimerCount(QObject):
    """Counts the timer events the application delivers, to any object."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Timer:
            self.count += 1
        return False


def main_thread_wakes() -> int:
    """How many times this (the main) thread was woken after it slept (Linux)."""
    status = Path(f"/proc/self/task/{threading.get_native_id()}/status").read_text()
    (line,) = [x for x in status.splitlines() if x.startswith("voluntary_ctxt_switches:")]
    return int(line.split()[1])


def test_the_app_is_idle_after_the_first_look_and_the_index_build(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_sessions(tmp_path, [cf.SID, cf.OTHER], monkeypatch)

    async def scenario() -> tuple[int, int]:
        async with open_app(tmp_path, demo=False) as app:
            notes: list[dict[str, Any]] = []
            await app.client.subscribe(notes.append)

            def ended(kind: str) -> bool:
                return any(n["kind"] == kind and n["done"] == n["total"] for n in notes)

            # the first look's import told its end, and the search index was built
            await until(lambda: ended(IMPORT_PROGRESS) and ended(SEARCH_INDEXING),
                        what="the first look and the index build over")  # fmt: skip
            await until(lambda: not app.controller.ops.busy, what="no operation running")
            await asyncio.sleep(0.5)  # their last events handled
            counter = TimerCount()
            qapp = QCoreApplication.instance()
            assert qapp is not None
            qapp.installEventFilter(counter)
            woken = main_thread_wakes()
            try:
                await asyncio.sleep(IDLE)
            finally:
                qapp.removeEventFilter(counter)
            return counter.count, main_thread_wakes() - woken

    timers, wakes = aloop(scenario())
    assert timers <= TIMER_EVENTS_AT_MOST, f"{timers} timer events in {IDLE} s idle"
    assert wakes <= WAKES_AT_MOST, f"the main thread woken {wakes} times in {IDLE} s idle"
