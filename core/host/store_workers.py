"""The threads a host runs store work on, so that the event loop never waits on a disk.

* `io`: host-wide work (fork, truncate, list, workspaces) in submission order on one
  worker thread;
* `session_io`: one live session's work in submission order for that session, at the same
  time as other sessions' work, on a small pool: turns in different sessions write and
  flush at once and share the disk's flushes (a group commit across sessions).

Work that raises is counted (`failures`): a failed change may have left a session as it
was read, so whoever caches snapshots re-reads after one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

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

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def sessions_in_flight(self) -> int:
        """Sessions with work submitted or running (their order locks are kept until then)."""
        return len(self._turns)

    async def io(self, fn: Callable[..., T], *args: Any) -> T:
        """Run host-wide store work on the single ordered worker."""
        loop = self.loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._ordered, self._run, fn, args)

    async def session_io(self, session_id: str, fn: Callable[..., T], *args: Any) -> T:
        """Run store work of one session on the pool, after that session's earlier work."""
        loop = self.loop = asyncio.get_running_loop()
        turn = self._turns.get(session_id)
        if turn is None:
            turn = self._turns[session_id] = _SessionTurn()
        turn.users += 1
        try:
            async with turn.lock:
                return await loop.run_in_executor(self._pool, self._run, fn, args)
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[session_id]

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            return fn(*args)
        except BaseException:
            with self._failures_lock:
                self._failures += 1
            raise

    def drain_sessions(self) -> None:
        """Wait for the sessions' work to finish; no more is taken (for shutdown)."""
        self._pool.shutdown(wait=True)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self._ordered.shutdown(wait=True)
