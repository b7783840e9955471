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

The threads take work from a plain queue (`_Threads`), not through an executor: a turn
is one hand-over each way, and an executor's future, work item and idle semaphore cost
the loop and the worker ~10 us of interpreter time per call (measured with 8 sessions
of no-op calls: 15-22 us per call through `ThreadPoolExecutor`, 6-8 us through a queue),
time during which the other side waits for the interpreter lock.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
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


class _Threads:
    """Up to `size` threads that call what is submitted, in submission order as they
    come free (one thread: strictly in order). A thread is started when work comes and
    none is idle; `shutdown` lets the work submitted before it finish. The threads are
    daemons, so a process that never shuts them down still exits: work cut off then was
    never acknowledged (a result is posted only after the work's flush)."""

    def __init__(self, size: int, name: str) -> None:
        self._size = size
        self._name = name
        self._queue: SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]] | None]
        self._queue = SimpleQueue()
        self._threads: list[threading.Thread] = []
        #: threads waiting for work that no submission has counted on yet
        self._idle = 0
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the store workers are shut down")
            if self._idle:
                self._idle -= 1  # that thread takes this work
            elif len(self._threads) < self._size:
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            self._queue.put((fn, args))

    def _work(self) -> None:
        get, lock = self._queue.get, self._lock
        while (item := get()) is not None:
            fn, args = item
            try:
                fn(*args)
            except BaseException:  # the callers catch what their work raises
                log.exception("store work failed outside its own handling")
            with lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Run what was submitted, then stop the threads and wait for them."""
        with self._lock:
            self._closed = True
            threads, self._threads = self._threads, []
            for _ in threads:
                self._queue.put(None)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join()


class StoreWorkers:
    def __init__(self, session_workers: int = SESSION_WORKERS) -> None:
        self._ordered = _Threads(1, "forkwise-store")
        self._pool = _Threads(session_workers, "forkwise-session")
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

    async def _submit(self, pool: _Threads, fn: Callable[..., T], args: Any) -> T:
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
        self._pool.shutdown()

    def shutdown(self) -> None:
        self._pool.shutdown()
        self._ordered.shutdown()


def _succeed(future: asyncio.Future[T], result: T) -> None:
    if not future.done():  # its caller may have been cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
