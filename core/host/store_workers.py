"""The threads a host runs store work on, so that the event loop never waits on a disk.

* `io`: host-wide work (fork, truncate, list, workspaces) in submission order on one
  worker thread;
* `session_io`: one live session's work in submission order for that session, at the same
  time as other sessions' work, on a small pool: turns in different sessions write and
  flush at once and share the disk's flushes (a group commit across sessions).

Work that raises is counted (`failures`): a failed change may have left a session as it
was read, so whoever caches snapshots re-reads after one.

Results go back to the loop through one mailbox (`post`), with whatever the work
announced meanwhile (the host posts its notifications there): in the order they were
posted, and with one wake-up of the loop for all that is posted before it gets to them —
turns of several sessions that share a flush come back together, not one wake-up each.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

#: threads that run live sessions' store work; appends in flight at once share flushes
SESSION_WORKERS = 8


class _SessionTurn:
    """The lock that keeps one session's work in order, and how many calls use it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class StoreWorkers:
    def __init__(self, session_workers: int = SESSION_WORKERS) -> None:
        self._ordered = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forkwise-store")
        self._pool = ThreadPoolExecutor(
            max_workers=session_workers, thread_name_prefix="forkwise-session"
        )
        self._turns: dict[str, _SessionTurn] = {}
        self._failures_lock = threading.Lock()
        self._failures = 0
        #: the loop the work was submitted from (where results and notifications go)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._mail: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._mail_lock = threading.Lock()
        #: the loop a delivery of the mail is scheduled on
        self._waking: asyncio.AbstractEventLoop | None = None

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def sessions_in_flight(self) -> int:
        """Sessions with work submitted or running (their order locks are kept until then)."""
        return len(self._turns)

    async def io(self, fn: Callable[..., T], *args: Any) -> T:
        """Run host-wide store work on the single ordered worker."""
        return await self._submit(self._ordered, fn, args)

    async def session_io(self, session_id: str, fn: Callable[..., T], *args: Any) -> T:
        """Run store work of one session on the pool, after that session's earlier work."""
        turn = self._turns.get(session_id)
        if turn is None:
            turn = self._turns[session_id] = _SessionTurn()
        turn.users += 1
        try:
            async with turn.lock:
                return await self._submit(self._pool, fn, args)
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[session_id]

    def post(self, fn: Callable[..., None], *args: Any) -> None:
        """Call `fn(*args)` on the loop, after what was posted before (from any thread);
        dropped when no loop has submitted work yet or the loop is closed."""
        with self._mail_lock:
            loop = self.loop
            if loop is None or loop.is_closed():
                self._mail.clear()
                return
            self._mail.append((fn, args))
            if self._waking is loop:
                return  # a delivery is scheduled on this loop already
            self._waking = loop
        loop.call_soon_threadsafe(self._deliver_mail)

    def _deliver_mail(self) -> None:
        with self._mail_lock:
            mail = list(self._mail)
            self._mail.clear()
            self._waking = None
        for fn, args in mail:
            try:
                fn(*args)
            except Exception:
                log.exception("store work's result could not be delivered")

    async def _submit(self, pool: ThreadPoolExecutor, fn: Callable[..., T], args: Any) -> T:
        self.loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = self.loop.create_future()
        pool.submit(self._run, future, fn, args)
        return await future

    def _run(self, future: asyncio.Future[T], fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            result = fn(*args)
        except BaseException as exc:
            with self._failures_lock:
                self._failures += 1
            self.post(_fail, future, exc)
            return
        self.post(_succeed, future, result)

    def drain_sessions(self) -> None:
        """Wait for the sessions' work to finish; no more is taken (for shutdown)."""
        self._pool.shutdown(wait=True)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self._ordered.shutdown(wait=True)


def _succeed(future: asyncio.Future[T], result: T) -> None:
    if not future.done():  # its caller may have been cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
