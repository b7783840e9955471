"""The app's garbage collector runs on the GUI thread: a Qt object in a reference cycle is
destroyed there, even when other threads allocate all the while."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest
from PySide6.QtCore import QObject, QTimer

from forkwise.gui.app.main_thread_gc import MainThreadCollector

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


def _due_for_a_full_collection() -> None:
    """The objects made so far moved into the oldest generation, and its count past its
    threshold (each middle collection adds 1 to it)."""
    gc.collect(1)
    while gc.get_count()[2] <= gc.get_threshold()[2]:
        gc.collect(1)


def test_a_full_collection_waits_for_a_quarter_more_survivors(qtbot: Any) -> None:
    """As the automatic collector: with many long-lived objects, a full collection comes
    only once a quarter as many again have survived; and it then frees a cycle among
    objects that had survived the one before."""
    generations: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    collector = MainThreadCollector()
    gc.callbacks.append(seen)
    try:
        kept = [[i] for i in range(40_000)]  # long-lived, like the client's rows
        holder = [_Cyclic()]
        _due_for_a_full_collection()
        generations.clear()
        collector.collect()
        assert generations == [2]

        ref = weakref.ref(holder[0])
        del holder  # a cycle among the survivors of that collection is garbage now
        kept += [[i] for i in range(1_000)]  # few new survivors
        _due_for_a_full_collection()
        generations.clear()
        collector.collect()
        assert 2 not in generations  # 1,000 more of over 40,000: no full collection yet
        assert ref() is not None

        survivors = gc.get_freeze_count()  # the process's own objects among them
        kept += [[i] for i in range(survivors // 3)]  # now over a quarter more
        _due_for_a_full_collection()
        generations.clear()
        collector.collect()
        assert generations == [2]
        assert ref() is None
    finally:
        gc.callbacks.remove(seen)
        collector.stop()
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_at_exit_nothing_is_collected_and_everything_is_left_frozen(qtbot: Any) -> None:
    """The app's process ends after `stop_at_exit`: no collection walks its objects
    (here, nor in the interpreter's teardown, which skips frozen objects), and a Qt
    object in a cycle is not destroyed by a collection another thread runs after it."""
    collector = MainThreadCollector()
    generations: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    try:
        kept = [[i] for i in range(40_000)]  # long-lived, like the client's rows
        ref = weakref.ref(_Cyclic())  # garbage, in a cycle
        gc.callbacks.append(seen)
        try:
            collector.stop_at_exit()
            assert generations == []
            assert gc.get_freeze_count() > len(kept)
            assert gc.isenabled()
            worker = threading.Thread(target=gc.collect)
            worker.start()
            worker.join(timeout=10)
        finally:
            gc.callbacks.remove(seen)
        assert generations == [2]  # the worker's collection ran: it left the cycle alone
        assert ref() is not None
    finally:
        gc.unfreeze()  # this test process goes on
        gc.collect()
