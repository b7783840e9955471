"""A time limit for a GUI test's scenario that holds whatever the scenario does.

`asyncio.wait_for(scenario, 60)` did not: on its timeout it cancels the scenario and then
waits, with no limit, for the scenario to finish being cancelled. A scenario whose
clean-up awaits something that never comes (a host that waits on a turn, a future nobody
resolves) or that swallows the cancel keeps `wait_for` waiting for ever, the loop idle
(issue 19: a draft sat until CI's 90 minutes with its "60 s timeout").

`run_with_limit` instead gives the scenario `limit` seconds, then cancels it and gives its
clean-up `grace` seconds more; a scenario still not done then is abandoned: the loop
stops and the test fails with the scenario's stack, the stacks of the tasks still
pending on the loop and every thread's stack. A main thread stuck outside the loop
(blocked in a call, so no loop timer can run) is left to pytest's own limit, which
packaging/dev.sh sets for every test (`faulthandler_timeout` with
`faulthandler_exit_on_timeout`: every thread's stack, then the process ends).

What made that draft hang: it called `QApplication.processEvents()` inside the scenario
while the session's turns ran. On the qasync loop every asyncio callback is a Qt timer, so
Qt's nested event processing ran, inside the scenario's own step, the wake-up of another
task (the agent's driver: `Agent._drive`, its `_stream` result in). asyncio refuses to
enter a task while another one runs ("Cannot enter into task"), the loop's exception
handler logs it, and that wake-up is gone: the task never runs again, and a cancel cannot
reach it either (what it waits on is already done). The host's close then waits on that
task for ever. `run_with_limit` fails the scenario as soon as the loop reports such a
refused step, with the stack of the call that ran the events (`ReenteredLoop`); tests run
Qt's pending events with `gui_harness.qt_events()` instead, which runs no timer.
"""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import traceback
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: seconds a scenario may run before it is cancelled
LIMIT = 60.0
#: seconds its clean-up may take once it is cancelled
GRACE = 15.0


class ScenarioHung(AssertionError):
    """The scenario (or its clean-up after the cancel) did not end in time."""


class ReenteredLoop(AssertionError):
    """Qt's events were run inside a task's step (a nested event loop), and a task's
    wake-up was lost there: that task would never run again."""


def refused_step(context: dict[str, Any]) -> bool:
    """Whether the loop reports a task step asyncio would not enter (another task ran)."""
    exc = context.get("exception")
    return isinstance(exc, RuntimeError) and str(exc).startswith("Cannot enter into task")


def stacks(loop: asyncio.AbstractEventLoop, scenario: asyncio.Task[Any]) -> str:
    """The scenario's stack, the other pending tasks' stacks and every thread's stack."""
    out = io.StringIO()
    out.write("--- the scenario\n")
    scenario.print_stack(file=out)
    for task in asyncio.all_tasks(loop):
        if task is not scenario and not task.done():
            out.write(f"--- pending task {task.get_name()}: {task.get_coro()!r}\n")
            task.print_stack(file=out)
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        out.write(f"--- thread {thread.name} (daemon={thread.daemon})\n")
        if frame is not None:
            out.write("".join(traceback.format_stack(frame)))
    return out.getvalue()


def run_with_limit(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T],
                   limit: float = LIMIT, grace: float = GRACE) -> T:
    """Run `coro` on `loop` (not running) to its end, within `limit` + `grace` seconds."""
    scenario = loop.create_task(coro)
    seen: list[str] = []
    timers: list[asyncio.Handle] = []

    def abandon() -> None:
        if not scenario.done():
            seen.append(f"still not done {grace:g} s after the cancel\n" + stacks(loop, scenario))
            loop.stop()

    def overdue() -> None:
        if scenario.done():
            return
        seen.append(f"the scenario ran past {limit:g} s\n" + stacks(loop, scenario))
        scenario.cancel()
        timers.append(loop.call_later(grace, abandon))

    def reentered(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not refused_step(context):
            loop.default_exception_handler(context)
            return
        # called inside the nested event processing: this stack names the call that ran it
        where = "".join(traceback.format_stack(limit=25))
        seen.append(f"a task's step was run inside another task's step and lost "
                    f"({context['exception']}); Qt's events were run from here:\n{where}")
        loop.stop()  # the scenario cannot end well: fail now, not after the time limit

    loop.set_exception_handler(reentered)
    timers.append(loop.call_later(limit, overdue))
    try:
        result = loop.run_until_complete(scenario)
    except BaseException as exc:
        if seen:  # cancelled, abandoned, or it raised something else once cancelled
            raise _failure(seen) from exc
        raise
    finally:
        loop.set_exception_handler(None)
        for timer in timers:
            timer.cancel()
    if seen:  # it ended after the cancel by returning, or raising something else
        raise _failure(seen)
    return result


def _failure(seen: list[str]) -> AssertionError:
    text = "\n".join(seen)
    if text.startswith("a task's step was run inside"):
        return ReenteredLoop(text)
    return ScenarioHung(text)
