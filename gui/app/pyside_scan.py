"""PySide's per-module source scan, told beforehand what it would find.

Once PySide6 is imported, it replaces `__import__`: after every import statement it looks
the module the statement returned up in `__feature__.pyside_feature_dict`, and a module not
in it yet is read whole (`inspect.getsource`) to find whether it mentions "PySide6" (0) or
not (-1). The entry only matters to modules that select a `__feature__` option
(`snake_case`, `true_property`); this app selects none. On the way to the window's first
frame that scan read ~50 modules' sources (typing, argparse, datetime, each of ours): 5-7 ms
of CPU (PySide6 6.11.3, offscreen). `mark_scanned` enters the modules already loaded — which
cannot have selected an option before PySide was there — and the app's own modules, with
the value the scan gives them, so that it reads none of them.
"""

from __future__ import annotations

import os
import sys

#: the app's package: every module of it imports PySide6 (the scan's 0)
PACKAGE = "forkwise.gui"


def mark_scanned() -> bool:
    """Enter the loaded modules (-1) and this package's modules (0) in PySide's table;
    False (nothing done) when this PySide keeps no such table."""
    feature = sys.modules.get("__feature__")
    table = getattr(feature, "pyside_feature_dict", None)
    if not isinstance(table, dict):
        return False
    for name in list(sys.modules):
        table.setdefault(name, 0 if name.startswith(PACKAGE) else -1)
    top = os.path.dirname(os.path.dirname(__file__))  # the package's folder (gui/)
    # a packaged app keeps its modules in an archive, with no sources to scan (no walk)
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        rel = os.path.relpath(folder, top)
        prefix = PACKAGE if rel == "." else f"{PACKAGE}.{rel.replace(os.sep, '.')}"
        table.setdefault(prefix, 0)
        for entry in files:
            stem, dot, ext = entry.partition(".")
            if dot and ext == "py" and stem != "__init__":
                table.setdefault(f"{prefix}.{stem}", 0)
    return True
