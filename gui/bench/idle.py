"""The app idle: `forkwise.gui.app.app.run` on a store, its window shown (offscreen), the
agents' folders of its home watched, left alone for a window of seconds once its start-up
work is over; the CPU its process spent meanwhile (all threads, `getrusage`). Then the
window is closed, and the time of that (`closed_at`, `time.monotonic()`, system-wide) is
printed, so that the parent can take the quit time: window closed to process gone.

The baseline is an empty QMainWindow's process, idle for as long (what Qt alone costs)."""

from __future__ import annotations

import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

#: start-up is over once the process spent less than this share of a core over `QUIET_SPAN`
#: (the first look's import and the index's build take half a core or more)
QUIET_SHARE = 0.05
QUIET_SPAN = 1.0
#: seconds at most for start-up (the first look imports the agents' files, then the search
#: index is built)
START_AT_MOST = float(os.environ.get("FORKWISE_BENCH_START", "60"))


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def wakeups() -> int:
    """How many times this (the main) thread has been woken after it slept (Linux; 0
    elsewhere): what keeps a process from being idle, even when each wake costs little."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/status") as fh:
            for line in fh:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def app_idle(store: Path | None, seconds: float) -> dict[str, Any]:
    """`seconds` of idle of the app on `store` (None: an empty window), then its close."""
    if store is not None:  # as the launcher does: the app's modules before Qt's
        from forkwise.gui.app import app as app_module
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication.instance() or QApplication(["forkwise-bench"])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    marks: dict[str, Any] = {}
    began = time.monotonic()
    samples: list[tuple[float, float]] = []

    def settled(window: Any) -> bool:
        if store is None:
            return True
        c = window.controller
        return bool(c.loaded and window.property("watchingStarted") and not c.ops.busy)

    def wait_for_quiet(window: Any) -> None:
        """Every quarter second (only while starting): quiet for `QUIET_SPAN`, measure."""
        now = time.monotonic()
        samples.append((now, cpu()))
        span = [s for s in samples if s[0] >= now - QUIET_SPAN - 0.01]
        long_enough = now - span[0][0] >= QUIET_SPAN
        quiet = long_enough and (span[-1][1] - span[0][1]) / (now - span[0][0]) < QUIET_SHARE
        if (settled(window) and quiet) or now - began > START_AT_MOST:
            poll.stop()
            marks["start_seconds"] = now - began
            marks["start_quiet"] = bool(quiet)
            marks["start_settled"] = settled(window)
            if store is not None:  # what was still running, if start-up did not end
                marks["start_ops"] = window.controller.ops.activity
            measure(window)

    def measure(window: Any) -> None:
        marks["cpu0"], marks["t0"], marks["woken0"] = cpu(), time.monotonic(), wakeups()
        # one timer for the whole window: nothing of the measuring wakes the process
        # a precise timer: a coarse one (Qt's default) may fire up to 5 % early, and the
        # window measured would be shorter than asked
        end = QTimer(window)
        end.setTimerType(Qt.TimerType.PreciseTimer)
        end.setSingleShot(True)
        end.timeout.connect(lambda: finish(window))
        end.start(int(seconds * 1000))

    def finish(window: Any) -> None:
        marks["cpu_seconds"] = cpu() - marks.pop("cpu0")
        marks["seconds"] = time.monotonic() - marks.pop("t0")
        marks["main_wakeups_per_second"] = (wakeups() - marks.pop("woken0")) / marks["seconds"]
        marks["closed_at"] = time.monotonic()
        window.close()
        if store is None:
            app.quit()

    poll = QTimer()
    poll.setInterval(250)
    if store is None:
        window = QMainWindow()
        window.resize(1280, 800)
        window.show()
        poll.timeout.connect(lambda: wait_for_quiet(window))
        poll.start()
        app.exec()
        status = 0
    else:
        build = app_module._build_window

        def watched(*args: Any, **kwargs: Any) -> Any:
            window = build(*args, **kwargs)
            poll.timeout.connect(lambda: wait_for_quiet(window))
            poll.start()
            return window

        app_module._build_window = watched
        try:
            status = app_module.run(store, None, None)
        finally:
            app_module._build_window = build
    marks["returned_at"] = time.monotonic()
    return marks | {"status": status}
