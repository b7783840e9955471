"""GUI figures of the benchmark suite, each measured in a process of its own.

    python -m forkwise.gui.bench.perf open --store DIR --session BIG --other SMALL
    python -m forkwise.gui.bench.perf cold --store DIR [--t0 MONOTONIC]
    python -m forkwise.gui.bench.perf cold-baseline [--t0 MONOTONIC]
    python -m forkwise.gui.bench.perf tree --store DIR
    python -m forkwise.gui.bench.perf transcript --store DIR --session BIG --other SMALL
    python -m forkwise.gui.bench.perf idle --store DIR --seconds S
    python -m forkwise.gui.bench.perf idle-baseline --seconds S

`core/bench` launches these (core never imports Qt) and reads the one JSON line each prints
on stdout: seconds and bytes, never a verdict. Everything runs offscreen with the real
pieces: the in-process host, `Client.in_process`, the Controller and the MainWindow
(`cold` runs `forkwise.gui.app.app.run` itself).

How "painted" is detected: an event filter sees the QEvent.Paint of the widget; the time
is taken in a zero-delay timer queued from that filter, i.e. after the paint has been
handled (slightly late rather than early). `tree` paints synchronously (`repaint()`).
`--t0` is the parent's `time.monotonic()` just before it started this process (the clock
is system-wide on Linux), so `cold` includes interpreter start and every import; its
`*_cpu` marks are the CPU seconds this process had used by then (on a shared machine they
move less than the wall-clock marks).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

FIGURES = ("open", "cold", "cold-baseline", "tree", "transcript", "idle", "idle-baseline")


def rss_bytes(field: str = "VmRSS") -> int:
    """`VmRSS` (or `VmHWM`, the peak) of this process from /proc/self/status; 0 elsewhere."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(field.encode() + b":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak_rss() -> bool:
    """Restart VmHWM at the current RSS (Linux: `5` into /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _paint_watch(on_paint: Callable[[Any], bool]) -> Any:
    """An event filter that calls `on_paint(widget)` on every Paint until it returns True."""
    from PySide6.QtCore import QEvent, QObject

    class PaintWatch(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and on_paint(obj):
                obj.removeEventFilter(self)
            return False

    return PaintWatch()


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _app() -> Any:
    import PySide6.QtWidgets  # noqa: F401  (before qasync: it picks the first binding it finds)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    return app


# --- cold start ----------------------------------------------------------------------


def cold(store: Path | None, t0: float) -> dict[str, Any]:
    """Process start to the first painted main window: `forkwise.gui.app.app.run` on `store`
    (None: an empty QMainWindow, the baseline). Also the first paint of the session tree
    with rows in it, i.e. the window showing the store (`tree_painted`: rows from the
    store's index while the host opens, when it has one), and the host's listing in the
    tree (`ready`: sessions can be opened).

    The paint watch sits on the main window and on the tree's viewport only (the app's
    window as `_build_window` returns it, before it is shown), not on the application:
    an application-wide Python filter has PySide wrap every object that gets an event —
    Qt's private ones too, each such wrap searching PySide's class tree — which cost the
    app's process ~15 ms more CPU than the empty window's, a cost of the measuring."""
    if store is not None:  # as the launcher does: the app's modules before Qt's
        from forkwise.gui.app import app as app_module
    from PySide6.QtCore import QEvent, QObject, QTimer

    app = _app()
    marks: dict[str, float] = {}

    class FirstPaints(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                self._saw(obj)
            return False

        def _saw(self, widget: Any) -> None:
            if widget.objectName() == "mainWindow" and "painted" not in marks:
                marks["painted"] = time.monotonic() - t0
                marks["painted_cpu"] = time.process_time()
                if store is None:
                    QTimer.singleShot(0, app.quit)
            parent = widget.parentWidget()
            if (store is not None and "tree_painted" not in marks and parent is not None
                    and parent.objectName() == "sessionTree" and parent.model().rowCount()):
                marks["tree_painted"] = time.monotonic() - t0
                marks["tree_painted_cpu"] = time.process_time()
                marks["tree_rows"] = parent.model().rowCount()
                window = parent.window()
                controller = window.controller
                if controller.loaded:
                    ready(window)
                else:  # rows from the index: the host's listing is still to come
                    controller.treeLoaded.connect(lambda _n: ready(window))

    def ready(window: Any) -> None:
        marks["ready"] = time.monotonic() - t0
        marks["ready_cpu"] = time.process_time()
        QTimer.singleShot(0, window.close)

    watch = FirstPaints()
    if store is None:
        from PySide6.QtWidgets import QMainWindow

        window = QMainWindow()
        window.setObjectName("mainWindow")
        window.installEventFilter(watch)
        window.resize(1280, 800)
        window.show()
        app.exec()
        status = 0
    else:
        from forkwise.gui.widgets.viewport import adopt_viewport

        build = app_module._build_window

        def watched(*args: Any, **kwargs: Any) -> Any:
            window = build(*args, **kwargs)
            window.installEventFilter(watch)
            adopt_viewport(window.tree).installEventFilter(watch)
            return window

        app_module._build_window = watched
        try:
            status = app_module.run(store, None, None)
        finally:
            app_module._build_window = build
    return marks | {"status": status, "rss": rss_bytes()}


# --- the app over a store, in this process --------------------------------------------


class _Harness:
    """Host, client, controller and window as `forkwise.gui.app.app` assembles them."""

    def __init__(self, store: Path, settings_dir: Path) -> None:
        self.store = store
        self.settings_dir = settings_dir

    async def __aenter__(self) -> _Harness:
        from PySide6.QtCore import QSettings

        from forkwise.core.client.local import open_store
        from forkwise.gui.app.features import FEATURES
        from forkwise.gui.kernel.controller import Controller
        from forkwise.gui.kernel.notify import Notifier
        from forkwise.gui.shell.main_window import MainWindow

        self.opened = await open_store(self.store, serve=False)
        self.client = self.opened.client
        await self.client.follow()
        self.controller = Controller(self.client, Notifier())
        settings = QSettings(str(self.settings_dir / "gui.ini"), QSettings.Format.IniFormat)
        self.window = MainWindow(self.controller, settings, store_label=str(self.store),
                                 features=FEATURES)
        self.window.resize(1280, 800)
        self.window.show()
        return self

    async def load_tree(self) -> None:
        loaded: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.controller.treeLoaded.connect(lambda n: _settle(loaded, n))
        self.controller.start()
        await asyncio.wait_for(loaded, 120)
        await self.controller.ops.wait_idle(120)

    async def __aexit__(self, *_exc: object) -> None:
        await self.controller.stop()
        self.controller.ops.cancel_all()
        await asyncio.sleep(0)
        self.window.close()
        self.window.deleteLater()
        await self.opened.close()


async def open_transcript(store: Path, session: str, other: str, settings: Path,
                          frames: int = 0) -> dict[str, Any]:
    """Ask the window to open `session` (while `other` is open) until the first screen of
    its transcript is painted; RSS growth meanwhile, at the end and at its peak. Then
    (`frames`) that many page-up scrolls from its end, each painted (`scroll_*`)."""
    from PySide6.QtCore import QTimer

    async with _Harness(store, settings) as h:
        await h.load_tree()
        h.window.select_session(other)
        await h.controller.ops.wait_idle(120)
        await asyncio.sleep(0.05)
        model, view = h.controller.transcript, h.window.transcript
        shown: asyncio.Future[tuple[float, float]] = asyncio.get_running_loop().create_future()

        def painted(_widget: Any) -> bool:
            if h.controller.current != session or model.rowCount() == 0:
                return False
            QTimer.singleShot(0, lambda: _settle(shown, (time.perf_counter(),
                                                          time.thread_time())))
            return True

        watch = _paint_watch(painted)
        view.viewport().installEventFilter(watch)
        gc.collect()
        rss0 = rss_bytes()
        peak_known = reset_peak_rss()
        start, start_cpu = time.perf_counter(), time.thread_time()
        h.window.select_session(session)
        end, end_cpu = await asyncio.wait_for(shown, 120)
        rss1 = rss_bytes()
        peak = rss_bytes("VmHWM") if peak_known else rss1
        first_rows = model.rowCount()
        size = (store / "sessions" / f"{session}.jsonl").stat().st_size
        scrolled = await _scroll_up(view, frames, h) if frames else {}
        return scrolled | {
            "seconds": end - start,
            # the GUI thread's CPU meanwhile (the wall time includes waiting for a core)
            "gui_cpu_seconds": end_cpu - start_cpu,
            "rss_before": rss0,
            "rss_growth": rss1 - rss0,
            "rss_peak_growth": max(peak, rss1) - rss0,
            "file_bytes": size,
            "rows": first_rows,
            "events_loaded": model.loaded_seq,
        }


async def _scroll_up(view: Any, frames: int, h: _Harness) -> dict[str, Any]:
    """`frames` page-up scrolls of the transcript `view`, each painted at once: wall and
    GUI-thread CPU seconds per frame (cards laid out on their first showing included)."""
    await h.controller.ops.wait_idle(120)
    await asyncio.sleep(0.05)
    bar = view.verticalScrollBar()
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(frames):
        if bar.value() <= bar.minimum():
            break
        t, c = time.perf_counter(), time.thread_time()
        bar.setValue(bar.value() - bar.pageStep())
        view.viewport().repaint()
        times.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    return {
        "scroll_frames": len(times),
        "scroll_frame_median": statistics.median(times) if times else 0.0,
        "scroll_frame_max": max(times) if times else 0.0,
        "scroll_frame_cpu_median": statistics.median(cpu) if cpu else 0.0,
        "scroll_frame_cpu_max": max(cpu) if cpu else 0.0,
    }


async def tree(store: Path, settings: Path, frames: int = 30) -> dict[str, Any]:
    """The catalogue into the lineage tree (model reset, sort, expand, first row selected)
    until the view has painted; then, once the window has handed the view the rows after
    the first page (it does so right after that frame: `rest_seconds`, until painted),
    `frames` page-down scrolls, each painted."""
    from PySide6.QtCore import QModelIndex

    async with _Harness(store, settings) as h:
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        rows = await h.client.list_sessions()
        listed = time.perf_counter()
        h.controller._started(rows)  # what Controller.start does once the list is in
        view = h.window.tree
        view.viewport().repaint()
        ready = time.perf_counter()

        async def rest_fetched() -> None:
            while h.controller.tree.canFetchMore(QModelIndex()):
                await asyncio.sleep(0)

        await asyncio.wait_for(rest_fetched(), 120)
        view.viewport().repaint()
        settled = time.perf_counter()
        bar = view.verticalScrollBar()
        times: list[float] = []
        cpu: list[float] = []  # this thread's CPU: on a shared machine, the wall time
        for _ in range(frames):  # of a frame includes waiting for a core
            t, c = time.perf_counter(), time.thread_time()
            bar.setValue(bar.value() + bar.pageStep())
            view.viewport().repaint()
            times.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
        await h.controller.ops.wait_idle(120)
        return {
            "seconds": ready - listed,
            "rest_seconds": settled - ready,
            "list_seconds": listed - start,
            "sessions": len(rows),
            "top_rows": h.controller.tree.rowCount(),
            "scroll_frame_median": statistics.median(times) if times else 0.0,
            "scroll_frame_max": max(times) if times else 0.0,
            "scroll_frame_cpu_max": max(cpu) if cpu else 0.0,
        }


def _run_async(coro_of: Callable[[], Any]) -> Any:
    import qasync  # type: ignore[import-untyped]

    app = _app()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(coro_of())
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forkwise.gui.bench.perf")
    parser.add_argument("figure", choices=FIGURES)
    parser.add_argument("--store", type=Path, help="store directory")
    parser.add_argument("--session", help="open: the session to open")
    parser.add_argument("--other", help="open: the session open before it")
    parser.add_argument("--t0", type=float, help="cold: time.monotonic() at process start")
    parser.add_argument("--seconds", type=float, default=60.0, help="idle: the idle window")
    args = parser.parse_args(argv)
    t0 = args.t0 if args.t0 is not None else time.monotonic()
    if args.figure not in ("cold-baseline", "idle-baseline") and args.store is None:
        parser.error(f"{args.figure} needs --store")
    if args.figure in ("open", "transcript") and not (args.session and args.other):
        parser.error(f"{args.figure} needs --session and --other")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    # the window's geometry and state go to a throw-away config dir, not the person's
    config = Path(tempfile.mkdtemp(prefix="forkwise-perf-"))
    os.environ["XDG_CONFIG_HOME"] = str(config)
    try:
        if args.figure == "cold":
            out = cold(args.store, t0)
        elif args.figure == "cold-baseline":
            out = cold(None, t0)
        elif args.figure in ("idle", "idle-baseline"):
            from forkwise.gui.bench.idle import app_idle

            out = app_idle(args.store if args.figure == "idle" else None, args.seconds)
        elif args.figure in ("open", "transcript"):
            frames = 60 if args.figure == "transcript" else 0
            out = _run_async(lambda: open_transcript(args.store, args.session, args.other,
                                                     config, frames))
        else:
            out = _run_async(lambda: tree(args.store, config))
    finally:
        shutil.rmtree(config, ignore_errors=True)
    sys.stdout.write(orjson.dumps({"figure": args.figure, **out}).decode() + "\n")
    sys.stdout.flush()
    if args.figure == "idle":  # its quit figure: the process ends as the app's does
        from forkwise.gui.app.app import end_process

        end_process(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
