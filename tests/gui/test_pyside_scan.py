"""PySide reads the source of every module named in an import statement once it is loaded
(`__feature__`'s scan, gui/pyside_scan): the app enters the modules it has and its own in
PySide's table first, so that none of them is read on the way to the first frame.

Each check starts a fresh process: this one has imported PySide and every module already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forkwise.core.demo import build_demo_store

pytestmark = pytest.mark.gui

#: runs the app on argv[1] and prints the modules PySide's scan read before the first frame
#: (the scan's own function, counted; the window is closed once painted)
SCRIPT = r"""
import json, sys
import PySide6.QtCore  # as the bench's harness does: Qt first, then the app
scan = sys.modules["shibokensupport.feature"]
read = []
real = scan._mod_uses_pyside

def counted(module):
    read.append(module.__name__)
    return real(module)

scan._mod_uses_pyside = counted
from forkwise.gui import app as A

first = {}
paint_now = A._paint_now

def painted(window, *args, **kwargs):
    paint_now(window, *args, **kwargs)
    first["read"] = read[started:]  # by `run`, up to the first frame
    first["table"] = {name: scan.pyside_feature_dict.get(name)
                      for name in ("typing", "forkwise.gui.main_window", "forkwise.gui.perf")}
    window.close()

A._paint_now = painted
started, loaded = len(read), sorted(sys.modules)
status = A.run(sys.argv[1], None, None)
print(json.dumps({"status": status, "loaded": loaded, **first}))
"""


def run_app(store: Path, tmp_path: Path) -> dict[str, object]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               QT_LOGGING_RULES="qt.qpa.*=false", XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(store)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_no_module_of_the_app_is_read_by_pysides_scan_before_the_first_frame(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    seen = run_app(store, tmp_path)
    assert seen["status"] == 0
    read, loaded = seen["read"], seen["loaded"]
    assert isinstance(read, list)
    assert isinstance(loaded, list)
    ours = [name for name in read if name.startswith("forkwise.gui")]
    assert ours == [], f"PySide read these modules' sources before the first frame: {ours}"
    again = sorted(set(read) & set(loaded))  # e.g. typing, named again by our modules
    assert again == [], f"modules loaded before `run` were read again: {again}"
    assert "typing" in loaded
    # the values the scan itself gives: -1 for a module without PySide, 0 for one with it
    assert seen["table"] == {"typing": -1, "forkwise.gui.main_window": 0,
                             "forkwise.gui.perf": 0}
