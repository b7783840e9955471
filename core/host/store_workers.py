"""The threads a host runs store work on, so that the event loop never waits on a disk.

* `io`: host-wide work (fork, truncate, list, workspaces) in submission order on one
  worker thread;
* `session_io`: one live session's work in submission order for that session, at the same
  time as other sessions' work, on a small pool: turns in different sessions write and
  flush at once and share the disk's flushes (a group commit across sessions).

Work that raises is counted (`failures`): a failed change may have left a session as it
was read, so whoever caches snapshots re-reads after one.

Work goes out and comes back in batches (a group commit of the hand-overs): what the
loop submits during one of its passes is handed to the threads together at the end of
the pass (`_dispatch`), and results go back through one mailbox (`post`), with whatever
the work announced meanwhile (the host posts its notifications there), in the order they
were posted — delivered with one wake-up of the loop once no work is in flight, or at
the latest `HOLD_AT_MOST` after work was submitted. Turns of several sessions that share
a flush come back together. Handing each call over on its own and waking the loop for
each result made the threads and the loop take the interpreter lock from each other
several times a turn: with 8 sessions x 50 offline turns, process CPU 138-154 ms one by
one, 118-127 ms in batches (the loop thread 66 -> 52 ms, with half its wake-ups).

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
#: seconds a result may wait for the rest of its batch (work still in flight) before the
#: loop is woken for it anyway: a long call (a first replay, loading a long log) holds
#: back the others' results by no more than this
HOLD_AT_MOST = 0.010


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
        #: work submitted whose result is not posted yet (under the mail lock)
        self._in_flight = 0
        #: work submitted during the loop's current pass, handed over at its end
        self._queued: list[tuple[_Threads, asyncio.Future[Any], Callable[..., Any], Any]] = []
        #: the loop's timer that delivers held results at the latest (`HOLD_AT_MOST`)
        self._deadline: asyncio.TimerHandle | None = None
        #: the thread the loop runs on
        self._loop_thread: int | None = None
        #: times a worker thread woke the loop to deliver results (under the mail lock)
        self._wakeups = 0

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def wakeups(self) -> int:
        """How often a worker thread woke the loop to deliver what it posted: once for a
        batch of work that was in flight together."""
        return self._wakeups

    @property
    def held(self) -> int:
        """Results and notifications posted and not delivered yet."""
        with self._mail_lock:
            return len(self._mail)

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
        dropped when no loop has submitted work yet or the loop is closed. Held while
        other work is in flight (delivered with its results, or at `HOLD_AT_MOST`); on
        the loop's own thread (a write committed there), called now, after what is held."""
        loop = self.loop
        if threading.get_ident() == self._loop_thread and loop is not None and loop.is_running():
            with self._mail_lock:
                self._mail.append((fn, args))
            self._deliver_mail()
            return
        self._send(fn, args, done=False)

    def _send(self, fn: Callable[..., None], args: tuple[Any, ...], done: bool) -> None:
        with self._mail_lock:
            if done:
                self._in_flight -= 1
            loop = self.loop
            if loop is None or loop.is_closed():
                self._mail.clear()
                return
            self._mail.append((fn, args))
            if self._waking is loop or self._in_flight:
                return  # a delivery is scheduled, or comes with the last work in flight
            self._waking = loop
            self._wakeups += 1
        loop.call_soon_threadsafe(self._deliver_mail)

    def _deliver_mail(self) -> None:
        with self._mail_lock:
            mail = list(self._mail)
            self._mail.clear()
            self._waking = None
            idle = not self._in_flight
        if idle and self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        for fn, args in mail:
            try:
                fn(*args)
            except Exception:
                log.exception("store work's result could not be delivered")

    def _overdue(self) -> None:
        """`HOLD_AT_MOST` passed with work in flight: deliver what is held (again later
        while work is still in flight)."""
        self._deadline = None
        self._deliver_mail()
        loop = self.loop
        if self._in_flight and loop is not None and self._deadline is None:
            self._deadline = loop.call_later(HOLD_AT_MOST, self._overdue)

    async def _submit(self, pool: _Threads, fn: Callable[..., T], args: Any) -> T:
        loop = asyncio.get_running_loop()
        if self.loop is not loop:  # the first work, or a new loop: nothing of the old one
            self.loop, self._deadline = loop, None
            self._loop_thread = threading.get_ident()
            self._dispatch()  # work the old loop left queued
        future: asyncio.Future[T] = loop.create_future()
        with self._mail_lock:
            self._in_flight += 1
            first = not self._queued
            self._queued.append((pool, future, fn, args))
        if first:
            loop.call_soon(self._dispatch)
        if self._deadline is None:
            self._deadline = loop.call_later(HOLD_AT_MOST, self._overdue)
        return await future

    def _dispatch(self) -> None:
        """Hand the work the loop submitted in this pass to the threads, together."""
        with self._mail_lock:
            work, self._queued = self._queued, []
        for pool, future, fn, args in work:
            try:
                pool.submit(self._run, future, fn, args)
            except RuntimeError as exc:  # shut down meanwhile
                self._send(_fail, (future, exc), done=True)

    def _run(self, future: asyncio.Future[T], fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            result = fn(*args)
        except BaseException as exc:
            with self._failures_lock:
                self._failures += 1
            self._send(_fail, (future, exc), done=True)
            return
        self._send(_succeed, (future, result), done=True)

    def drain_sessions(self) -> None:
        """Wait for the sessions' work to finish; no more is taken (for shutdown)."""
        self._dispatch()
        self._pool.shutdown()

    def shutdown(self) -> None:
        self._dispatch()
        self._pool.shutdown()
        self._ordered.shutdown()
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


def _succeed(future: asyncio.Future[T], result: T) -> None:
    if not future.done():  # its caller may have been cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
