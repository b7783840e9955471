"""The one polling helper of the tests: wait, on the running loop, until something holds.

For what a test cannot be told of by a signal or a future (a widget's state, a list of
notifications a callback fills, a file another process writes). Bounded: it fails with
what it waited for once `timeout` passes. Never a proof that something did not happen:
for that, wait on a later signal that must come after it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
TIMEOUT = 15.0
STEP = 0.01


def _asked(predicate: Callable[[], T], deadline: float, timeout: float, what: str) -> T | None:
    """`predicate()` if true; None to ask again; fails once `deadline` has passed."""
    value = predicate()
    if value:
        return value
    if time.monotonic() > deadline:
        raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
    return None


async def until(predicate: Callable[[], T], timeout: float = TIMEOUT, what: str = "") -> T:
    """The first true value of `predicate()`, asked again every `STEP` seconds."""
    deadline = time.monotonic() + timeout
    while (value := _asked(predicate, deadline, timeout, what)) is None:
        await asyncio.sleep(STEP)
    return value


def first(items: Iterable[T], test: Callable[[T], Any]) -> T | None:
    """The first of `items` that passes `test` (a note among the notes heard so far)."""
    return next((item for item in items if test(item)), None)


async def note_until(notes: list[dict[str, Any]], test: Callable[[dict[str, Any]], Any],
                     timeout: float = TIMEOUT) -> dict[str, Any]:
    """The first of `notes` (filled by a subscription) that passes `test`, waiting for it."""
    return await until(lambda: first(notes, test), timeout, f"a note among {notes[-3:]}")


def wait_until(predicate: Callable[[], T], timeout: float = TIMEOUT, what: str = "") -> T:
    """`until` for a test with no loop running (what it waits for runs on threads)."""
    deadline = time.monotonic() + timeout
    while (value := _asked(predicate, deadline, timeout, what)) is None:
        time.sleep(STEP)
    return value
