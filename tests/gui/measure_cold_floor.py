"""The floor under the cold-frame figure: the first frame's widgets in plain PySide.

    python tests/gui/measure_cold_floor.py STORE [REPEATS]

Runs, interleaved, REPEATS times each: `forkwise.gui.bench.perf cold-baseline` (an empty
QMainWindow), this file's `--widgets` mode (the widgets the app's first frame shows —
menu bar with its four menus and 17 actions with their shortcuts, tool bar with a painted
icon, splitter, filter field with its clear button, a four-column tree over an empty model
with its "Loading sessions…" label, header label, list view, composer field and buttons,
status bar — built with PySide alone, no Forkwise code), and `forkwise.gui.bench.perf cold` on
STORE. Each is timed the way the bench times cold-frame: process start (`--t0`) to the main
window's first Paint event, in CPU seconds and in wall seconds; medians and their ratios to
the empty window are printed. Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

COLUMNS = ["Title", "Last activity", "Messages", "Model"]
ACTIONS = [  # (text, shortcut): the main window's actions
    ("&New session", "Ctrl+N"), ("&Fork", "Ctrl+Shift+K"), ("&Find…", "Ctrl+F"),
    ("Search &all sessions…", "Ctrl+Shift+F"), ("&Stop", "Ctrl+."), ("Use the &model", ""),
    ("&Preferences…", "Ctrl+,"), ("&Quit", "Ctrl+Q"), ("&About Forkwise", ""),
    ("&Delete session", "Del"), ("D&uplicate session", "Ctrl+D"),
    ("&Approve tool call", "Ctrl+Shift+Y"), ("D&eny tool call", "Ctrl+Shift+N"),
    ("&Rename…", "F2"), ("&Previous branch", "Alt+Left"), ("&Next branch", "Alt+Right"),
    ("&Compare…", "Ctrl+Shift+C"),
]  # fmt: skip
MENUS = [("&File", (0, 6, 7)), ("&Edit", (2, 3)),
         ("&Session", (1, 13, 14, 15, 16, 4, 5, 11, 12, 10, 9)), ("&Help", (8,))]


def widgets(t0: float) -> dict[str, float]:
    """The first frame's widgets, plain PySide; marks as `forkwise.gui.bench.perf.cold` takes them."""
    from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QObject, Qt, QTimer
    from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPixmap
    from PySide6.QtWidgets import (
        QApplication,
        QHBoxLayout,
        QLabel,
        QLineEdit,
        QListView,
        QMainWindow,
        QPlainTextEdit,
        QPushButton,
        QSplitter,
        QToolBar,
        QTreeView,
        QVBoxLayout,
        QWidget,
    )

    app = QApplication([sys.argv[0]])
    marks: dict[str, float] = {}

    class Watch(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and "painted" not in marks:
                marks["painted"] = time.monotonic() - t0
                marks["painted_cpu"] = time.process_time()
                QTimer.singleShot(0, app.quit)
            return False

    class Empty(QAbstractItemModel):
        def index(self, row: int, column: int, parent: object = None) -> QModelIndex:
            return QModelIndex()

        def parent(self, index: object = None) -> QModelIndex:  # type: ignore[override]
            return QModelIndex()

        def rowCount(self, parent: object = None) -> int:
            return 0

        def columnCount(self, parent: object = None) -> int:
            return len(COLUMNS)

        def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> object:
            if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
                return COLUMNS[section]
            return None

    window = QMainWindow()
    window.setObjectName("mainWindow")
    window.setWindowTitle("Forkwise — store")
    window.installEventFilter(Watch(window))
    actions = []
    for text, keys in ACTIONS:
        action = QAction(text, window)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.setToolTip(text)
        window.addAction(action)
        actions.append(action)
    pix = QPixmap(32, 32)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor("#3b82f6"))
    painter.drawEllipse(4, 4, 24, 24)
    painter.end()
    actions[1].setIcon(QIcon(pix))
    left = QWidget(window)
    field = QLineEdit(left)
    field.setPlaceholderText("Filter by title or message text")
    field.setClearButtonEnabled(True)
    tree = QTreeView(left)
    tree.setModel(Empty(tree))
    tree.setUniformRowHeights(True)
    tree.setAlternatingRowColors(True)
    tree.setSortingEnabled(True)
    tree.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    viewport = tree.findChild(QWidget, "qt_scrollarea_viewport")
    loading = QLabel("Loading sessions…", viewport)
    loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
    loading.setEnabled(False)
    left_layout = QVBoxLayout(left)
    left_layout.addWidget(field)
    left_layout.addWidget(tree, 1)
    right = QWidget(window)
    header = QLabel("No session open", right)
    font = header.font()
    font.setBold(True)
    header.setFont(font)
    transcript = QListView(right)
    transcript.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
    transcript.setWordWrap(True)
    composer = QWidget(right)
    text = QPlainTextEdit(composer)
    text.setPlaceholderText("Open or create a session to write to it")
    text.setEnabled(False)
    buttons = QVBoxLayout()
    for label in ("Send", "Stop"):
        button = QPushButton(label, composer)
        button.setEnabled(False)
        buttons.addWidget(button)
    composer_layout = QHBoxLayout(composer)
    composer_layout.addWidget(text, 1)
    composer_layout.addLayout(buttons)
    right_layout = QVBoxLayout(right)
    right_layout.addWidget(header)
    right_layout.addWidget(transcript, 1)
    right_layout.addWidget(composer)
    splitter = QSplitter(Qt.Orientation.Horizontal, window)
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setSizes([500, 780])
    window.setCentralWidget(splitter)
    toolbar = QToolBar("Main", window)
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for i in (0, 1, 4):
        toolbar.addAction(actions[i])
    toolbar.addSeparator()
    toolbar.addAction(actions[6])
    window.addToolBar(toolbar)
    window.statusBar().addPermanentWidget(QLabel("", window))
    for title, shown in MENUS:
        menu = window.menuBar().addMenu(title)
        for i in shown:
            menu.addAction(actions[i])
    window.resize(1280, 800)
    window.show()
    app.exec()
    return marks


def run(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """One fresh process, `--t0` its start; the JSON line it prints."""
    cmd = [sys.executable, *args, "--t0", repr(time.monotonic())]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=True)
    out: dict[str, float] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", nargs="?", type=Path)
    parser.add_argument("repeat", nargs="?", type=int, default=7)
    parser.add_argument("--widgets", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--t0", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.widgets:
        import asyncio  # noqa: F401  (the imports forkwise.gui.bench.perf makes for every figure)
        import statistics as _statistics  # noqa: F401

        print(orjson.dumps(widgets(args.t0)).decode())
        return 0
    if args.store is None:
        parser.error("STORE is needed (a store the app opens, e.g. the bench's)")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               QT_LOGGING_RULES="qt.qpa.*=false",
               PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "forkwise-bench-pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    kinds = {
        "empty window": ["-m", "forkwise.gui.bench.perf", "cold-baseline"],
        "same widgets, plain PySide": [__file__, "--widgets"],
        "forkwise": ["-m", "forkwise.gui.bench.perf", "cold", "--store", str(args.store)],
    }
    for argv in kinds.values():  # warm the page cache and the bytecode
        run(argv, env)
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for _ in range(args.repeat):
        for kind, argv in kinds.items():
            runs[kind].append(run(argv, env))
    base_cpu = statistics.median(r["painted_cpu"] for r in runs["empty window"])
    base_wall = statistics.median(r["painted"] for r in runs["empty window"])
    for kind, done in runs.items():
        cpu = statistics.median(r["painted_cpu"] for r in done)
        wall = statistics.median(r["painted"] for r in done)
        print(f"{kind:28s} first paint: CPU {cpu * 1e3:5.0f} ms ({cpu / base_cpu:.2f}x), "
              f"wall {wall * 1e3:5.0f} ms ({wall / base_wall:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
