"""The app's garbage collector runs on the GUI thread: a Qt object in a reference cycle is
destroyed there, even when other threads allocate all the while."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest
from PySide6.QtCore import QObject, QTimer

from forkwise.gui.main_thread_gc import MainThreadCollector

pytestmark = pytest.mark.gui


class _Cyclic(QObject):
    destroyed_in: list[str] = []

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.start(10_000)
        self.me = self  # a reference cycle: only the cyclic collector frees it

    def __del__(self) -> None:
        _Cyclic.destroyed_in.append(threading.current_thread().name)


def test_cycles_are_collected_on_the_gui_thread(qtbot: Any) -> None:
    collector = MainThreadCollector()
    try:
        assert not gc.isenabled()
        ref = weakref.ref(_Cyclic())
        stop = threading.Event()

        def allocate() -> None:  # a busy worker, like the host's store thread
            while not stop.is_set():
                _ = [{} for _ in range(1000)]

        worker = threading.Thread(target=allocate)
        thresholds = gc.get_threshold()
        worker.start()
        try:
            gc.set_threshold(10, 10, 10)  # so the worker's allocations alone would collect
            qtbot.waitUntil(lambda: ref() is None, timeout=5000)
        finally:
            stop.set()
            worker.join(timeout=10)
            gc.set_threshold(*thresholds)
        assert _Cyclic.destroyed_in == [threading.main_thread().name]
    finally:
        collector.stop()
    assert gc.isenabled()
