"""What the tree-scroll figure is made of: per page-down CPU, what ran beside it, the floor.

    python tests/gui/measure_tree_scroll.py STORE [--runs N]

Runs, interleaved, N times each (fresh processes, offscreen), the bench's `tree` scrolls
(`forkwise.gui.bench.perf.tree`: the store's listing into the window, the rest of the rows
handed over, then 30 page-downs, each painted) in three ways:

- `as-is`: right after the rows are in, as the bench does; the app is still starting (the
  store watcher looks at the 10,000 files each second for its first 3 s; the agents'
  folders are being watched from a worker thread), so some page-downs share the GIL;
- `settled`: the same once the app is idle (its operations done, the watcher settled);
- `floor`: settled, the same view over a C++ model (QStandardItemModel behind a
  QSortFilterProxyModel holding the texts, icons and alignments the rows paint): Qt's own
  cost of a page-down, with no Python called while painting.

Printed: the median per-page CPU of the GUI thread, the slowest page's CPU and wall time
per run, and for as-is the page-downs during which a store watcher's look ran. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

MODES = ("as-is", "settled", "floor")
PAGES = 30


def _watch_looks(looks: list[tuple[float, float]]) -> None:
    """Record when the store watcher looks at the folder (start, end; perf_counter)."""
    from forkwise.core.store import watcher

    look_now = watcher.StoreWatcher.look_now

    def timed(self: Any, names: Any = None) -> Any:
        start = time.perf_counter()
        try:
            return look_now(self, names)
        finally:
            looks.append((start, time.perf_counter()))

    watcher.StoreWatcher.look_now = timed  # type: ignore[method-assign]


def _cpp_model(proxy: Any) -> Any:
    """The top-level rows of `proxy` (and what they paint) in a C++ model behind a C++ proxy."""
    from PySide6.QtCore import QSortFilterProxyModel, Qt
    from PySide6.QtGui import QStandardItem, QStandardItemModel

    roles = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole,
             Qt.ItemDataRole.TextAlignmentRole)
    model = QStandardItemModel(0, proxy.columnCount())
    for row in range(proxy.rowCount()):
        items = []
        for column in range(proxy.columnCount()):
            index = proxy.index(row, column)
            item = QStandardItem()
            for role in roles:
                value = proxy.data(index, role)
                if value is not None:
                    item.setData(value, role)
            items.append(item)
        model.appendRow(items)
    cpp = QSortFilterProxyModel()
    cpp.setSourceModel(model)
    cpp.keep = model  # type: ignore[attr-defined]
    return cpp


async def _scrolls(store: Path, settings: Path, mode: str) -> dict[str, Any]:
    from PySide6.QtCore import QModelIndex

    from forkwise.gui.bench.perf import _Harness

    looks: list[tuple[float, float]] = []
    _watch_looks(looks)
    async with _Harness(store, settings) as h:
        await asyncio.sleep(0.05)
        rows = await h.client.list_sessions()
        h.controller._started(rows)
        view = h.window.tree
        view.viewport().repaint()
        while h.controller.tree.canFetchMore(QModelIndex()):
            await asyncio.sleep(0)
        view.viewport().repaint()
        if mode != "as-is":
            await h.controller.ops.wait_idle(120)
            await asyncio.sleep(3.5)  # the store watcher's first 3 s
        if mode == "floor":
            cpp = _cpp_model(h.controller.proxy)
            view.setModel(cpp)
            view.viewport().repaint()
        bar = view.verticalScrollBar()
        pages = []
        for _ in range(PAGES):
            t, c = time.perf_counter(), time.thread_time()
            bar.setValue(bar.value() + bar.pageStep())
            view.viewport().repaint()
            pages.append((t, time.perf_counter() - t, time.thread_time() - c))
        if mode == "floor":
            view.setModel(h.controller.proxy)
        await h.controller.ops.wait_idle(120)
    return {
        "cpu": [p[2] for p in pages],
        "wall": [p[1] for p in pages],
        "beside_look": [
            i for i, (t, wall, _cpu) in enumerate(pages)
            if any(start < t + wall and end > t for start, end in looks)
        ],
    }


def one(store: Path, mode: str) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_API", "pyside6")
    config = Path(tempfile.mkdtemp(prefix="forkwise-scroll-"))
    os.environ["XDG_CONFIG_HOME"] = str(config)
    from forkwise.gui.bench.perf import _run_async

    out: dict[str, Any] = _run_async(lambda: _scrolls(store, config, mode))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(prog="measure_tree_scroll.py")
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.stdout.write(orjson.dumps(one(args.store, args.one)).decode() + "\n")
        return 0
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               QT_LOGGING_RULES="qt.qpa.*=false")
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    loads: list[float] = []
    for _ in range(args.runs):
        for mode in MODES:
            loads.append(os.getloadavg()[0])
            done = subprocess.run(
                [sys.executable, __file__, str(args.store), "--one", mode],
                capture_output=True, text=True, env=env, timeout=600, check=True,
            )
            results[mode].append(orjson.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{args.runs} runs of {PAGES} page-downs each, load {min(loads):.1f}-{max(loads):.1f}")
    for mode, runs in results.items():
        cpu = [c * 1e3 for r in runs for c in r["cpu"]]
        slowest_cpu = [max(r["cpu"]) * 1e3 for r in runs]
        slowest_wall = [max(r["wall"]) * 1e3 for r in runs]
        line = (f"{mode:8} page CPU median {statistics.median(cpu):5.2f} ms; slowest page per "
                f"run: CPU {' '.join(f'{x:.1f}' for x in slowest_cpu)} ms (median "
                f"{statistics.median(slowest_cpu):.1f}), wall {' '.join(f'{x:.0f}' for x in slowest_wall)}"
                f" ms (median {statistics.median(slowest_wall):.0f})")
        if mode == "as-is":
            beside = sum(1 for r in runs if r["beside_look"])
            worst_beside = sum(
                1 for r in runs if r["wall"].index(max(r["wall"])) in r["beside_look"])
            line += (f"; a watcher look ran beside some page-downs in {beside} runs, beside "
                     f"the slowest in {worst_beside}")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
