"""Time from a Fork click to the child shown (in the tree, selected, first transcript page
painted) on a session of N events: `python tests/gui/measure_fork.py [N] [REPEATS]`.

The baseline measured in the same run is a raw copy of the source file (what a fork has
to write at least), so the figure is reported as a ratio too. Not a test.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: polling, run as a script

import PySide6.QtWidgets  # noqa: F401
import qasync
from gui_harness import open_app, until
from PySide6.QtWidgets import QApplication

from forkwise.core.bench.synth import write_store


async def main(n_events: int, repeats: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="fw-measure-"))
    write_store(root / "store", sessions=1, events_per_session=n_events)
    async with open_app(root, demo=False) as app:
        source = app.controller.tree.session_ids()[0]
        app.window.select_session(source)
        await until(lambda: app.controller.transcript.rowCount() > 0, timeout=60)
        await app.idle()
        src_file = app.store_dir / "sessions" / f"{source}.jsonl"
        timings: list[float] = []
        copies: list[float] = []
        tails: list[float] = []
        stalls: list[float] = []
        for _ in range(repeats):
            app.window.select_session(source)
            await app.idle()
            before = set(app.controller.tree.session_ids())
            shown: asyncio.Future[float] = asyncio.get_running_loop().create_future()
            app.controller.forkShown.connect(
                lambda _sid, secs, f=shown: f.done() or f.set_result(secs))
            app.window.action_fork.trigger()
            secs = await asyncio.wait_for(shown, 60)
            app.window.transcript.viewport().repaint()  # painted, not only queued
            await until(lambda b=before: set(app.controller.tree.session_ids()) - b)
            timings.append(secs)
            # the view follows to the fork point at the end: pages keep loading; how long,
            # and how long the event loop was ever blocked meanwhile
            t0, worst, last = time.perf_counter(), 0.0, time.perf_counter()
            while not app.controller.transcript.at_end:
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                worst, last = max(worst, now - last), now
            tails.append(time.perf_counter() - t0)
            stalls.append(worst)
            t0 = time.perf_counter()
            shutil.copyfile(src_file, root / "copy.jsonl")
            copies.append(time.perf_counter() - t0)
        median, base = statistics.median(timings), statistics.median(copies)
        print(f"events={n_events} fork click → child shown: median {median * 1000:.0f} ms "
              f"(min {min(timings) * 1000:.0f}, max {max(timings) * 1000:.0f}); raw file copy "
              f"{base * 1000:.1f} ms; ratio {median / base:.0f}x; then the rest of the "
              f"transcript to the fork point: median {statistics.median(tails) * 1000:.0f} ms, "
              f"longest event-loop stall {max(stalls) * 1000:.0f} ms")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000,
                                     int(sys.argv[2]) if len(sys.argv) > 2 else 5))
