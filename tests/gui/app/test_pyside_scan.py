"""PySide reads the source of every module named in an import statement once it is loaded
(`__feature__`'s scan, gui/app/pyside_scan): the app enters the modules it has and its own in
PySide's table first, so that none of them is read on the way to the first frame.

Each check starts a fresh process: this one has imported PySide and every module already."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_harness import run_on_demo

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
from forkwise.gui.app import app as A

first = {}
paint_now = A._paint_now

def painted(window, *args, **kwargs):
    paint_now(window, *args, **kwargs)
    first["read"] = read[started:]  # by `run`, up to the first frame
    first["table"] = {name: scan.pyside_feature_dict.get(name)
                      for name in ("typing", "forkwise.gui.shell.main_window", "forkwise.gui.bench.perf")}
    window.close()

A._paint_now = painted
started, loaded = len(read), sorted(sys.modules)
status = A.run(sys.argv[1], None, None)
print(json.dumps({"status": status, "loaded": loaded, **first}))
"""


def test_no_module_of_the_app_is_read_by_pysides_scan_before_the_first_frame(
        tmp_path: Path) -> None:
    seen = run_on_demo(tmp_path, SCRIPT)
    read, loaded = seen["read"], seen["loaded"]
    assert isinstance(read, list)
    assert isinstance(loaded, list)
    ours = [name for name in read if name.startswith("forkwise.gui")]
    assert ours == [], f"PySide read these modules' sources before the first frame: {ours}"
    again = sorted(set(read) & set(loaded))  # e.g. typing, named again by our modules
    assert again == [], f"modules loaded before `run` were read again: {again}"
    assert "typing" in loaded
    # the values the scan itself gives: -1 for a module without PySide, 0 for one with it
    assert seen["table"] == {"typing": -1, "forkwise.gui.shell.main_window": 0,
                             "forkwise.gui.bench.perf": 0}
