"""A guard against a PySide6 fault that aborts the interpreter on Python < 3.12.

Measured with PySide6-Essentials 6.12.0 on CPython 3.11: every call that returns None,
True or False from C++ (`QLabel.setText`, `index.data()` of an empty role, every signal
`emit()`, `beginInsertRows` …) hands back the singleton without taking a reference — 200
`setText` calls lower `sys.getrefcount(None)` by 200. On 3.12+ these objects are immortal
and nothing happens; on 3.11 the count reaches zero after a few thousand calls and the
process dies with "none_dealloc: deallocating None" (or bool_dealloc).

`apply()` checks for the fault once and, only where it shows, gives those singletons a
reference count no program can use up — what CPython 3.12 does for them by design. It is
applied when `forkwise.gui` is imported, before any widget exists.
"""

from __future__ import annotations

import ctypes
import sys

#: what CPython 3.12's immortal objects effectively have: far more than can ever be lost
_RESERVE = 1 << 40
_SINGLETONS = (None, True, False, NotImplemented, Ellipsis)

_state = {"applied": False}


def leaks_references() -> bool:
    """True if PySide6 calls drop a reference to None (checked on a throw-away QObject)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(16):
        probe.setObjectName("probe")
    lost = before - sys.getrefcount(None)
    if lost > 0:
        ctypes.pythonapi.Py_IncRef.argtypes = [ctypes.py_object]
        for _ in range(lost):
            ctypes.pythonapi.Py_IncRef(None)
    return lost >= 8


def apply() -> bool:
    """Make the singletons effectively immortal when this PySide6 needs it."""
    if _state["applied"] or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _state["applied"]
    if not leaks_references():
        return False
    for obj in _SINGLETONS:
        # ob_refcnt is the first field of every object in CPython's (non-debug) layout
        ctypes.c_ssize_t.from_address(id(obj)).value += _RESERVE
    _state["applied"] = True
    return True


def is_applied() -> bool:
    return _state["applied"]
