"""The GUI tests' time limit (scenario_watchdog) on a real qasync loop: a scenario that
hangs, or whose clean-up hangs once it is cancelled, fails with its stack in bounded time;
one that ends in time gives its result or its own error."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
import qasync
from scenario_watchdog import ReenteredLoop, ScenarioHung, run_with_limit

pytestmark = pytest.mark.gui


@pytest.fixture
def loop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        loop.close()
        asyncio.set_event_loop(None)


async def waits_on_a_turn_that_never_ends() -> None:
    """A scenario whose clean-up waits for something nobody will ever resolve (as a
    host's close waits on a turn), the loop idle meanwhile."""
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    try:
        await asyncio.sleep(3600)
    finally:
        await never  # the cancel came once: this await is not cancelled again


async def swallows_the_cancel() -> str:
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue


def test_wait_for_waits_without_limit_for_a_clean_up_that_hangs(
        loop: asyncio.AbstractEventLoop) -> None:
    """Why the old limit (`asyncio.wait_for(scenario, 60)`) never fired: after its own
    timeout it waits for the cancelled scenario to end, with no limit."""
    started = time.monotonic()
    with pytest.raises(ScenarioHung) as hung:
        run_with_limit(loop, asyncio.wait_for(waits_on_a_turn_that_never_ends(), 0.2),
                       limit=1.5, grace=0.5)
    assert time.monotonic() - started >= 1.2  # wait_for's 0.2 s did not end it (Qt timers: ±5%)
    assert "waits_on_a_turn_that_never_ends" in str(hung.value)


@pytest.mark.parametrize("scenario", [waits_on_a_turn_that_never_ends, swallows_the_cancel])
def test_a_scenario_that_does_not_end_after_its_cancel_fails_with_its_stack(
        loop: asyncio.AbstractEventLoop, scenario: Any) -> None:
    started = time.monotonic()
    with pytest.raises(ScenarioHung) as hung:
        run_with_limit(loop, scenario(), limit=0.3, grace=0.3)
    assert time.monotonic() - started < 10
    text = str(hung.value)
    assert "ran past 0.3 s" in text
    assert "still not done 0.3 s after the cancel" in text
    assert scenario.__name__ in text  # the scenario's own frame
    assert "--- thread MainThread" in text


def test_a_scenario_that_ends_when_cancelled_fails_as_overdue(
        loop: asyncio.AbstractEventLoop) -> None:
    with pytest.raises(ScenarioHung, match=r"ran past 0\.2 s") as hung:
        run_with_limit(loop, asyncio.sleep(3600), limit=0.2, grace=5)
    assert isinstance(hung.value.__cause__, asyncio.CancelledError)


def test_a_scenario_in_time_gives_its_result_or_its_own_error(
        loop: asyncio.AbstractEventLoop) -> None:
    async def answer() -> int:
        await asyncio.sleep(0.01)
        return 42

    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise KeyError("its own")

    assert run_with_limit(loop, answer(), limit=5) == 42
    with pytest.raises(KeyError, match="its own"):
        run_with_limit(loop, fails(), limit=5)


def test_running_qt_events_inside_a_step_while_a_task_is_due_fails_at_once_naming_the_call(
        loop: asyncio.AbstractEventLoop) -> None:
    """QApplication.processEvents() in a scenario runs asyncio's due callbacks (Qt timers
    on qasync) inside the scenario's step; the other task's wake-up is refused and lost.
    Without the check the other task, and whoever awaits it, waits for ever."""
    from PySide6.QtWidgets import QApplication

    async def other() -> None:
        for _ in range(1000):
            await asyncio.sleep(0)

    async def scenario() -> None:
        task = asyncio.ensure_future(other())
        await asyncio.sleep(0.001)
        for _ in range(5):
            time.sleep(0.002)  # its wake-up is due
            QApplication.processEvents()
        await task

    started = time.monotonic()
    with pytest.raises(ReenteredLoop) as failed:
        run_with_limit(loop, scenario(), limit=30)
    assert time.monotonic() - started < 5
    text = str(failed.value)
    assert "Cannot enter into task" in text
    assert "QApplication.processEvents()" in text  # the line that ran the events


def test_qt_events_delivers_posted_events_and_runs_no_task_step(
        loop: asyncio.AbstractEventLoop) -> None:
    """The harness's way to let Qt catch up inside a scenario: a resize's layout lands,
    and a task that is due is not entered (it runs on the loop's own pass after)."""
    from gui_harness import qt_events
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    steps: list[int] = []

    async def other() -> None:
        for n in range(50):
            steps.append(n)
            await asyncio.sleep(0)

    async def scenario() -> None:
        window = QWidget()
        label = QLabel("text", window)
        QVBoxLayout(window).addWidget(label)
        window.resize(300, 200)
        window.show()
        task = asyncio.ensure_future(other())
        await asyncio.sleep(0.001)
        before = len(steps)
        window.resize(420, 260)
        for _ in range(5):
            time.sleep(0.002)
            qt_events()
        assert len(steps) == before  # no other task ran inside this step
        assert label.width() > 300  # the layout followed the resize
        await task
        window.close()

    run_with_limit(loop, scenario(), limit=30)
    assert steps == list(range(50))

