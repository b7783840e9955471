"""The one way the GUI runs a client call: an awaited coroutine with callbacks.

Like Anki's `CollectionOp`: the caller hands over a coroutine and says what to do with its
result and with a failure; the helper schedules it on the running (qasync) event loop, so
the GUI thread never waits. Failures without a handler go to the notification bridge.
Tests await `wait_idle()` (an asyncio future), never a blocking Qt wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from forkwise.gui.kernel.notify import Notifier

T = TypeVar("T")
log = logging.getLogger(__name__)


class OpRunner(QObject):
    """Schedules client calls. Signals: `busyChanged(bool)` when the first op starts or
    the last one ends (the window shows progress from it)."""

    busyChanged = Signal(bool)
    #: what the latest running op does ("Searching"), "" when nothing runs
    activityChanged = Signal(str)

    def __init__(self, notifier: Notifier, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.notifier = notifier
        self._tasks: set[asyncio.Task[Any]] = set()
        self._doing: dict[asyncio.Task[Any], str] = {}  # insertion order: latest last
        self._idle_waiters: list[asyncio.Future[None]] = []

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        success: Callable[[T], None] | None = None,
        failure: Callable[[BaseException], None] | None = None,
        *,
        what: str = "",
    ) -> asyncio.Task[None]:
        """Run `coro`; then `success(result)` or `failure(exc)` on the GUI thread."""
        task = asyncio.ensure_future(self._guard(coro, success, failure, what))
        self._tasks.add(task)
        if len(self._tasks) == 1:
            self.busyChanged.emit(True)
        task.add_done_callback(self._finished)
        task.add_done_callback(lambda _t: coro.close())  # cancelled before it started
        if what:
            self._doing[task] = what
            self.activityChanged.emit(self.activity)
        return task

    async def _guard(
        self,
        coro: Coroutine[Any, Any, T],
        success: Callable[[T], None] | None,
        failure: Callable[[BaseException], None] | None,
        what: str,
    ) -> None:
        try:
            result = await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("operation %s failed: %r", what or coro, exc)
            if failure is not None:
                try:
                    failure(exc)
                except Exception:
                    log.exception("failure handler of %s raised", what)
                    self.notifier.error(exc, what)
            else:
                self.notifier.error(exc, what)
            return
        if success is not None:
            try:
                success(result)
            except Exception as exc:  # a GUI bug must not vanish silently
                log.exception("success handler of %s raised", what)
                self.notifier.error(exc, what)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if self._doing.pop(task, None) is not None:
            self.activityChanged.emit(self.activity)
        if not self._tasks:
            self.busyChanged.emit(False)
            waiters, self._idle_waiters = self._idle_waiters, []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    @property
    def activity(self) -> str:
        """What the latest running op that said what it does is doing."""
        return next(reversed(self._doing.values()), "")

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Until every scheduled op (and any it scheduled) has finished."""
        loop = asyncio.get_running_loop()
        while self._tasks:
            fut: asyncio.Future[None] = loop.create_future()
            self._idle_waiters.append(fut)
            await asyncio.wait_for(fut, timeout)
            await asyncio.sleep(0)  # let follow-up ops be scheduled

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
