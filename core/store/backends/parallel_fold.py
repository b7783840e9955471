"""Reading many logs the index does not cover on more than one core.

A listing without an index checks every line of every log (`parse_log`): on a store of
10,000 sessions / 479 MB, ~3 s of Python, all of it in one process while the other cores
idle. Each log is checked on its own, so the work splits by file: `fold_all` forks worker
processes (after every import, so a worker starts in a few milliseconds and shares the
parent's memory until it writes to it) and does a share itself; the results come back in
the order of the jobs, exactly what one process would have computed, as soon as they
are known in that order, and the caller writes the index from them as before.

The jobs are cut into runs of consecutive logs of about `CHUNK_BYTES` each; every process
takes the next run not taken yet (a counter in shared memory, under a `lockf` lock the
kernel lets go of if its holder dies), so a worker that gets little CPU on a busy machine
takes few runs. A worker writes the results of each run into a file of its own in memory;
the parent takes them between its own runs (`_Pool`). Whatever a worker does not
deliver — it died, was killed, or failed in a way `one` does not turn into a result — the
parent computes itself afterwards, so a failure there is raised as it would have been in
one process.

Forking is used only where it is cheap and safe for this: on Linux, with more than one
core available to the process, and for at least `PARALLEL_BYTES` of logs (below that the
fork costs more than it saves). A worker runs `one` and nothing else: no lock another
thread may hold, no logging, no cyclic collection (the caller pauses it), and `os._exit`
(no cleanup of the parent's objects, no flush of its buffers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

if sys.platform.startswith("linux"):  # elsewhere one process (`processes_for`): no fcntl
    import fcntl

T = TypeVar("T")

#: logs read at least this many bytes at once before a worker is forked: below, the fork
#: and what it costs both processes in copied pages eat the gain (measured, 2 cores, a
#: store of 48 KB logs: 4 MB 25 ms in one process / 30 ms in two, 8 MB 53 / 33 ms)
PARALLEL_BYTES = 8 << 20
#: a run of consecutive logs taken at once: ~6 ms of checking, so that the last run
#: leaves the other process waiting little
CHUNK_BYTES = 1 << 20
#: processes at most, the parent among them
MAX_PROCESSES = 4
#: a worker that finishes no log for this long, once the parent has done its share, is
#: killed and its share done by the parent (a log of several GB takes longer to check:
#: it is then read twice, which costs time, not a result)
STALL_SECONDS = 20.0

#: the shared counter of the next run to take (each worker's follow: `_Pool`)
_NEXT = 0


def processes_for(total_bytes: int) -> int:
    """How many processes (the caller's own among them) to read `total_bytes` of logs
    in: 1 unless forking is available and worth it."""
    if total_bytes < PARALLEL_BYTES or not sys.platform.startswith("linux"):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except OSError:
        return 1
    return max(1, min(cores, MAX_PROCESSES))


def chunks(sizes: Sequence[int], chunk_bytes: int = CHUNK_BYTES) -> list[range]:
    """The jobs (given as their sizes) cut into runs of consecutive ones of about
    `chunk_bytes` each (a larger job is a run of its own)."""
    out: list[range] = []
    start = held = 0
    for n, size in enumerate(sizes):
        held += size
        if held >= chunk_bytes:
            out.append(range(start, n + 1))
            start, held = n + 1, 0
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def fold_all(
    count: int,
    one: Callable[[int], T],
    sizes: Sequence[int] | None = None,
    processes: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Iterator[T]:
    """`one(i)` for each i in `range(count)`, in that order, in `processes` processes when
    more than one (`sizes`: each job's weight, bytes of log). Each result is given as soon
    as it and every one before it are known, so that the caller keeps what it makes of
    them, not all of them at once. The results of workers are pickled: `one` must return
    what pickles. `progress(done)` is called after each job the caller's own process does,
    with the jobs done so far in all of them. Take every result: a pool left unfinished
    stops its workers only when it is collected."""
    if processes <= 1:
        return _serial(count, one, progress)
    runs = chunks(sizes if sizes is not None else [CHUNK_BYTES] * count)
    if len(runs) < 2:
        return _serial(count, one, progress)
    workers = min(processes, len(runs)) - 1
    try:
        pool = _Pool(runs, one, workers, progress)
    except OSError:  # no file in memory to be had: one process
        return _serial(count, one, progress)
    return pool.run()


def _serial(
    count: int, one: Callable[[int], T], progress: Callable[[int], None] | None
) -> Iterator[T]:
    for i in range(count):
        result = one(i)
        if progress is not None:
            progress(i + 1)
        yield result


class _Pool(Generic[T]):
    """One fold over forked workers: the shared counters, the lock, each worker's file.

    A worker appends each run's results to its file as one record (a pickle of the run's
    number and its results) and then counts the record's bytes as delivered in shared
    memory; the parent reads what was delivered between its own runs, so the decoding of
    results is shared out with the runs (the parent takes fewer) instead of waiting at
    the end. A record a worker did not finish is never counted."""

    def __init__(
        self,
        runs: list[range],
        one: Callable[[int], T],
        workers: int,
        progress: Callable[[int], None] | None,
    ) -> None:
        # imported here, before any fork, not with the module: a listing the index covers
        # forks nothing
        import mmap
        import pickle

        self.protocol = pickle.HIGHEST_PROTOCOL
        self.runs, self.one, self.workers, self.progress = runs, one, workers, progress
        # slot 0: the next run; then for each worker w: jobs done (1 + 2w), bytes of
        # results delivered (2 + 2w)
        self.shared = mmap.mmap(-1, 8 * (1 + 2 * workers))
        self.counters = memoryview(self.shared).cast("q")
        self.lock_fd = _memory_file("forkwise-fold-lock")
        self.result_fds: list[int] = []
        self.taken_bytes: list[int] = []  # of each worker's file, read by the parent
        self.pids: list[int] = []
        self.results: dict[int, list[T]] = {}
        #: the process the workers work for: one whose parent is gone stops
        self.parent = os.getpid()

    def run(self) -> Iterator[T]:
        results = self.results
        given = 0  # runs whose results went to the caller
        try:
            for w in range(self.workers):
                try:
                    fd = _memory_file("forkwise-fold")
                    self.result_fds.append(fd)
                    self.taken_bytes.append(0)
                    pid = _fork()
                except OSError:  # no process or file to be had (EAGAIN, ENOMEM): fewer workers
                    break
                if pid == 0:
                    self._worker(w, fd)  # never returns
                self.pids.append(pid)
            mine = 0
            done_slots = slice(1, None, 2)
            for r in self._take():
                got = []
                for i in self.runs[r]:
                    got.append(self.one(i))
                    mine += 1
                    if self.progress is not None:
                        self.progress(mine + sum(self.counters[done_slots]))
                results[r] = got
                self._read_delivered()
                while given in results:  # in order, as far as known
                    yield from results.pop(given)
                    given += 1
            self._await_workers()
            self._read_delivered()
        finally:
            self._close()
        for r in range(given, len(self.runs)):
            jobs = self.runs[r]
            delivered = results.pop(r, None)
            if delivered is None or len(delivered) != len(jobs):  # a worker failed: done here
                yield from (self.one(i) for i in jobs)
            else:
                yield from delivered

    def _await_workers(self) -> None:
        """Wait for the workers to exit. One that finishes no job for `STALL_SECONDS` —
        stopped, or stuck on a lock a thread of this process held at the fork — is killed,
        and what it took is done here (`run`): a listing can be slowed by a worker, never
        hung by one."""
        done_slots = slice(1, None, 2)
        done, since = -1, time.monotonic()
        while self.pids:
            self.pids = [pid for pid in self.pids if not _exited(pid)]
            jobs = sum(self.counters[done_slots])
            if jobs != done:
                done, since = jobs, time.monotonic()
            elif self.pids and time.monotonic() - since > STALL_SECONDS:
                return  # `_close` kills and reaps those left
            time.sleep(0.002)

    def _take(self) -> Iterator[int]:
        """The runs this process takes, one at a time, until none is left."""
        counters, fd, total = self.counters, self.lock_fd, len(self.runs)
        while True:
            fcntl.lockf(fd, fcntl.LOCK_EX)
            try:
                r = counters[_NEXT]
                counters[_NEXT] = r + 1
            finally:
                fcntl.lockf(fd, fcntl.LOCK_UN)
            if r >= total:
                return
            yield r

    def _worker(self, w: int, fd: int) -> None:
        """A forked worker: take runs, append what each gave to `fd`, exit; exit before
        the next run once the parent is gone (a worker outlives a parent killed with
        SIGKILL by one run at most, ~6 ms of checking)."""
        import pickle

        code = 1
        try:
            with contextlib.suppress(ValueError, OSError):
                signal.set_wakeup_fd(-1)  # the parent's event loop's, not this process's
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGINT, signal.SIG_DFL)
            counters, done_slot, bytes_slot = self.counters, 1 + 2 * w, 2 + 2 * w
            for r in self._take():
                if os.getppid() != self.parent:
                    break  # the parent died (killed): nobody takes the results; and this
                    # process holds what it inherited (the store's writer lock among them)
                got = []
                for i in self.runs[r]:
                    got.append(self.one(i))
                    counters[done_slot] += 1
                record = pickle.dumps((r, got), protocol=self.protocol)
                view = memoryview(len(record).to_bytes(8, "little") + record)
                while view:
                    view = view[os.write(fd, view) :]
                counters[bytes_slot] += 8 + len(record)  # whole: the parent may take it
            code = 0
        finally:
            os._exit(code)

    def _read_delivered(self) -> None:
        """Take the records the workers have delivered since the last look."""
        import pickle

        for w, fd in enumerate(self.result_fds):
            end, at = self.counters[2 + 2 * w], self.taken_bytes[w]
            if end <= at:
                continue
            data = os.pread(fd, end - at, at)
            if len(data) != end - at:
                continue  # cannot be (delivered means written); looked at again later
            self.taken_bytes[w] = end
            view, pos = memoryview(data), 0
            while pos < len(data):
                size = int.from_bytes(view[pos : pos + 8], "little")
                r, got = pickle.loads(view[pos + 8 : pos + 8 + size])
                self.results[r] = got
                pos += 8 + size

    def _close(self) -> None:
        for pid in self.pids:  # left on an error in this process: stopped, reaped
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        self.pids = []
        for fd in [self.lock_fd, *self.result_fds]:
            os.close(fd)
        self.result_fds = []
        self.counters.release()
        self.shared.close()


def _exited(pid: int) -> bool:
    """Whether worker `pid` has exited (and is reaped)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def _memory_file(name: str) -> int:
    """A file in memory, gone when its last descriptor closes."""
    return os.memfd_create(name, os.MFD_CLOEXEC)


#: whether os.fork warns in a process with threads (3.12 on)
_FORK_WARNS = sys.version_info >= (3, 12)


def _fork() -> int:
    if not _FORK_WARNS:
        return os.fork()
    # Python 3.12 warns about any fork in a process with threads (a lock another thread
    # holds stays held in the child); a worker takes none of those locks (see above)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()
