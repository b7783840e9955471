"""GUI test set-up: a QApplication for every test (offscreen, see tests/conftest.py), a
qasync loop of its own per test, and the assembled app over a real host and JSONL store.

Never wait with qtbot inside a coroutine on the qasync loop (it starves asyncio): the
helpers here await asyncio futures and poll with `asyncio.sleep`. Never call
`QApplication.processEvents()` there either: it runs asyncio's due callbacks inside the
scenario's step, where a task's wake-up is refused and lost (the scenario then fails at
once, scenario_watchdog); `gui_harness.qt_events()` delivers Qt's pending events safely.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import PySide6.QtWidgets  # noqa: F401  (before qasync: it picks the first binding it finds)
import pytest
import qasync
from scenario_watchdog import run_with_limit

#: the agents' fixture writers (claude_fixtures, codex_fixtures, …) for the tests in every
#: folder here
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))

T = TypeVar("T")
TIMEOUT = 15.0


#: harmless messages of the offscreen platform plugin; everything else fails
OFFSCREEN_NOISE = (
    "This plugin does not support propagateSizeHints",
    "This plugin does not support raise",
    "This plugin does not support grabbing the keyboard",
    "This plugin does not support setParent",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gui" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def _qapp(qapp: Any) -> Iterator[Any]:
    qapp.setQuitOnLastWindowClosed(False)
    yield qapp
    # Qt objects a test left in reference cycles are destroyed here, on the GUI thread,
    # not later by a collection that happens to run in some worker thread
    gc.collect()


@pytest.fixture
def aloop(qapp: Any) -> Iterator[Callable[[Coroutine[Any, Any, T]], T]]:
    """Run a scenario coroutine on a fresh qasync loop (closed after the test), within
    a time limit that holds even when its clean-up hangs (scenario_watchdog)."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)

    def run(coro: Coroutine[Any, Any, T]) -> T:
        return run_with_limit(loop, coro)

    try:
        yield run
    finally:
        loop.close()
        asyncio.set_event_loop(None)


