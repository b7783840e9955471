"""StoreWorkers: one session's work in order, sessions at the same time, failures counted,
nothing kept per session once its work is done, and work handed over and brought back
in batches."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from polling import until

from forkwise.core.host import store_workers
from forkwise.core.host.store_workers import StoreWorkers

TIMEOUT = 10.0


@pytest.mark.asyncio
async def test_one_sessions_work_runs_in_order_and_its_lock_is_dropped_after() -> None:
    workers = StoreWorkers(session_workers=4)
    done: list[int] = []
    try:
        calls = [workers.session_io("a", done.append, i) for i in range(50)]
        await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
        assert done == list(range(50))
        assert workers.sessions_in_flight == 0
    finally:
        workers.shutdown()


@pytest.mark.asyncio
async def test_a_held_session_holds_up_no_other_and_is_kept_while_it_waits() -> None:
    workers = StoreWorkers(session_workers=2)
    release = threading.Event()
    try:
        held = asyncio.ensure_future(workers.session_io("slow", release.wait, TIMEOUT))
        queued = asyncio.ensure_future(workers.session_io("slow", lambda: "after"))
        assert await asyncio.wait_for(workers.session_io("fast", lambda: "fast"), TIMEOUT) == "fast"
        assert not held.done()
        assert not queued.done()
        assert workers.sessions_in_flight == 1  # "slow" is still in use, "fast" is gone
        release.set()
        assert await asyncio.wait_for(queued, TIMEOUT) == "after"
        assert await held is True
        assert workers.sessions_in_flight == 0
    finally:
        release.set()
        workers.shutdown()


@pytest.mark.asyncio
async def test_failures_are_counted_on_both_kinds_of_worker() -> None:
    workers = StoreWorkers()

    def fail() -> None:
        raise OSError("disk gone")

    try:
        with pytest.raises(OSError, match="disk gone"):
            await workers.io(fail)
        with pytest.raises(OSError, match="disk gone"):
            await workers.session_io("a", fail)
        assert await workers.io(lambda: 1) == 1
        assert workers.failures == 2
        assert workers.sessions_in_flight == 0
    finally:
        workers.shutdown()


@pytest.mark.asyncio
async def test_what_work_posts_comes_back_in_order_before_its_result() -> None:
    workers = StoreWorkers(session_workers=2)
    seen: list[object] = []

    def work(n: int) -> int:
        for i in range(3):  # as the host posts a change's notifications from the worker
            workers.post(seen.append, (n, i))
        return n

    try:
        async def one(n: int) -> None:
            result = await workers.session_io(f"s{n}", work, n)
            seen.append(("result", result))

        await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(8))), TIMEOUT)
        for n in range(8):
            mine = [x for x in seen if x in ((n, 0), (n, 1), (n, 2), ("result", n))]
            assert mine == [(n, 0), (n, 1), (n, 2), ("result", n)]
        assert len(seen) == 8 * 4
    finally:
        workers.shutdown()


def test_workers_serve_one_loop_after_another() -> None:
    workers = StoreWorkers(session_workers=2)
    try:
        for n in range(3):
            loop = asyncio.new_event_loop()
            run = workers.session_io("a", lambda n=n: n)
            assert loop.run_until_complete(asyncio.wait_for(run, TIMEOUT)) == n
            # a delivery scheduled on a loop that closes before it runs it does not hold
            # up what is posted on the next loop
            workers.post(print, "never delivered: its loop closes first")
            loop.close()
        assert asyncio.run(asyncio.wait_for(workers.io(lambda: "io"), TIMEOUT)) == "io"
    finally:
        workers.shutdown()


@pytest.mark.asyncio
async def test_shutdown_lets_submitted_work_finish_and_takes_no_more() -> None:
    workers = StoreWorkers(session_workers=2)
    release = threading.Event()
    done: list[str] = []

    def slow(name: str) -> None:
        release.wait(TIMEOUT)
        done.append(name)

    calls = [asyncio.ensure_future(workers.session_io(f"s{i}", slow, f"s{i}")) for i in range(5)]
    await asyncio.sleep(0)  # submitted: two run, three wait for a thread
    stopping = threading.Thread(target=workers.drain_sessions)
    stopping.start()
    release.set()
    stopping.join(TIMEOUT)
    assert not stopping.is_alive()
    assert sorted(done) == [f"s{i}" for i in range(5)]  # all ran before the threads ended
    await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
    with pytest.raises(RuntimeError):
        await workers.session_io("late", lambda: None)
    workers.shutdown()


@pytest.mark.asyncio
async def test_sessions_work_submitted_at_once_runs_on_as_many_threads_at_once() -> None:
    """Each session's piece of work gets a thread of its own (four pieces that wait for
    each other all finish), and each session's next piece runs after its first."""
    workers = StoreWorkers(session_workers=4)
    meet = threading.Barrier(4, timeout=TIMEOUT)
    order: dict[str, list[int]] = {f"s{i}": [] for i in range(4)}

    def first(sid: str) -> int:
        order[sid].append(1)
        return meet.wait()  # raises BrokenBarrierError unless all four run at once

    try:
        calls = [workers.session_io(sid, first, sid) for sid in order]
        calls += [workers.session_io(sid, order[sid].append, 2) for sid in order]
        await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
        assert all(seen == [1, 2] for seen in order.values())
    finally:
        workers.shutdown()


def test_work_left_on_a_loop_that_stopped_does_not_hold_up_the_next_loops() -> None:
    workers = StoreWorkers(session_workers=2)
    try:
        first = asyncio.new_event_loop()
        stranded = first.create_task(workers.session_io("a", lambda: "never awaited"))
        first.call_soon(first.stop)  # stops right after the submission, before its result
        first.run_forever()
        assert not stranded.done()
        first.close()
        assert asyncio.run(asyncio.wait_for(workers.session_io("b", lambda: "b"), TIMEOUT)) == "b"
    finally:
        workers.shutdown()


@pytest.mark.asyncio
async def test_work_submitted_together_comes_back_in_one_delivery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Work submitted in one pass of the loop is handed over together, and its results
    (with what it posted) come back together once none is in flight: when the first
    caller resumes, every other result is in already."""
    monkeypatch.setattr(store_workers, "HOLD_AT_MOST", 5 * TIMEOUT)  # no early delivery
    workers = StoreWorkers(session_workers=8)
    meet = threading.Barrier(8, timeout=TIMEOUT)
    posted: list[int] = []

    def work(n: int) -> int:
        meet.wait()  # all eight run at once, none finished before the others started
        workers.post(posted.append, n)
        return n

    try:
        calls = [asyncio.ensure_future(workers.session_io(f"s{n}", work, n)) for n in range(8)]
        first = await asyncio.wait_for(
            asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED), TIMEOUT
        )
        assert first[0]  # one has finished ...
        assert all(call.done() for call in calls)  # ... and with it, all of them
        assert sorted(posted) == list(range(8))
        assert [call.result() for call in calls] == list(range(8))
    finally:
        workers.shutdown()


@pytest.mark.asyncio
async def test_a_result_waits_for_the_work_in_flight_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One wake-up of the loop for a batch: a result that is in while other work runs
    is delivered with that work's result, not on its own."""
    monkeypatch.setattr(store_workers, "HOLD_AT_MOST", 5 * TIMEOUT)
    workers = StoreWorkers(session_workers=2)
    release, fast_done = threading.Event(), threading.Event()

    def fast() -> str:
        fast_done.set()
        return "fast"

    try:
        slow = asyncio.ensure_future(workers.session_io("slow", release.wait, TIMEOUT))
        quick = asyncio.ensure_future(workers.session_io("quick", fast))
        assert await asyncio.to_thread(fast_done.wait, TIMEOUT)
        # its result is posted: held, or (were it sent on its own) with a wake-up counted
        # in the same step, under the same lock
        await until(lambda: workers.held or workers.wakeups or quick.done(), TIMEOUT,
                    "quick's result posted")
        assert workers.wakeups == 0  # the loop was not woken for it
        assert workers.held == 1
        assert not quick.done()
        assert not slow.done()
        release.set()
        await asyncio.wait_for(asyncio.wait([slow], return_when=asyncio.FIRST_COMPLETED), TIMEOUT)
        assert quick.done()
        assert quick.result() == "fast"
        assert workers.wakeups == 1  # one wake-up delivered both
    finally:
        release.set()
        workers.shutdown()


@pytest.mark.asyncio
async def test_a_result_waits_for_long_work_in_flight_no_longer_than_hold_at_most() -> None:
    workers = StoreWorkers(session_workers=2)
    release = threading.Event()
    try:
        slow = asyncio.ensure_future(workers.io(release.wait, TIMEOUT))
        started = time.monotonic()
        fast = await asyncio.wait_for(workers.session_io("a", lambda: "fast"), TIMEOUT)
        assert fast == "fast"
        assert not slow.done()  # delivered while the long work still runs
        assert time.monotonic() - started < TIMEOUT / 2
        # and what is posted while it runs is delivered too
        arrived = asyncio.get_running_loop().create_future()
        threading.Thread(target=workers.post, args=(arrived.set_result, "note")).start()
        assert await asyncio.wait_for(arrived, TIMEOUT) == "note"
        assert not slow.done()
        release.set()
        assert await asyncio.wait_for(slow, TIMEOUT) is True
    finally:
        release.set()
        workers.shutdown()


@pytest.mark.asyncio
async def test_what_the_loop_posts_goes_out_at_once_after_what_is_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write committed on the loop announces its notes there: they go out at once,
    after what work in flight posted before them, so the order holds."""
    monkeypatch.setattr(store_workers, "HOLD_AT_MOST", 5 * TIMEOUT)
    workers = StoreWorkers(session_workers=2)
    release, posted = threading.Event(), threading.Event()
    seen: list[str] = []

    def work() -> None:
        workers.post(seen.append, "from the work")  # held: the work is in flight
        posted.set()
        release.wait(TIMEOUT)

    try:
        running = asyncio.ensure_future(workers.session_io("a", work))
        assert await asyncio.to_thread(posted.wait, TIMEOUT)
        assert seen == []
        workers.post(seen.append, "from the loop")
        assert seen == ["from the work", "from the loop"]
        release.set()
        await asyncio.wait_for(running, TIMEOUT)
    finally:
        release.set()
        workers.shutdown()
