"""The cold-frame figure in instructions, which a loaded machine does not move.

    python tests/gui/measure_cold_instructions.py STORE

Counts, under valgrind (callgrind), the instructions a fresh process runs from its start
to its first frame painted, for: an empty QMainWindow (`forkwise.gui.bench.perf cold-baseline`),
the same widgets as the app's first frame in plain PySide (measure_cold_floor.py), and the
app on STORE (`forkwise.gui.bench.perf cold`, i.e. `forkwise.gui.app.app.run`). Each ends once its
frame is complete (its children painted too). Wall and CPU times on this shared machine
move by ±10 % between runs; these counts by ±0.1 %, so a change of a few million
instructions (≈ 1 ms) shows. Not a test; needs valgrind. Prints millions and the ratios.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_to_first_frame(kind: str, store: str | None) -> None:
    """In the measured process: `kind`'s window, then exit once its first frame is done."""
    if kind == "floor":
        sys.path.insert(0, str(HERE))
        import asyncio  # noqa: F401  (the imports forkwise.gui.bench.perf makes for every figure)

        import measure_cold_floor

        measure_cold_floor.widgets(0.0)  # returns once painted
        os._exit(0)
    # in the bench's order: the harness's own imports, the app's modules (as the launcher
    # imports them: before Qt), then Qt
    perf = importlib.import_module("forkwise.gui.bench.perf")
    if kind == "app":
        from forkwise.gui.app import app

        importlib.import_module("PySide6.QtCore")
        paint_now = app._paint_now

        def painted(*args: object, **kwargs: object) -> None:
            paint_now(*args, **kwargs)  # type: ignore[arg-type]
            os._exit(0)

        app._paint_now = painted
        perf.main(["cold", "--store", str(store)])
    else:
        importlib.import_module("PySide6.QtCore")
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QMainWindow

        class Done(QObject):
            def eventFilter(self, obj: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Paint:
                    QTimer.singleShot(0, lambda: os._exit(0))
                return False

        done = Done()
        init = QMainWindow.__init__

        def watched(self: QMainWindow, *args: object) -> None:
            init(self, *args)  # type: ignore[arg-type]
            self.installEventFilter(done)

        QMainWindow.__init__ = watched  # type: ignore[method-assign]
        perf.main(["cold-baseline"])


def count(kind: str, store: str, env: dict[str, str]) -> int:
    cmd = [sys.executable, __file__, "--run", kind, store]
    subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=300)  # bytecode
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *cmd], env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"valgrind said: {done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--run", choices=("empty", "floor", "app"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_to_first_frame(args.run, str(args.store))
        return 0
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               QT_LOGGING_RULES="qt.qpa.*=false",
               XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="forkwise-cold-"),
               PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "forkwise-bench-pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        counts = {kind: count(kind, str(args.store), env) for kind in ("empty", "floor", "app")}
    finally:
        shutil.rmtree(env["XDG_CONFIG_HOME"], ignore_errors=True)
    for kind, n in counts.items():
        print(f"{kind:6s} {n / 1e6:8.1f} M instructions to the first frame "
              f"({n / counts['empty']:.3f}x the empty window)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
