"""The installed PySide6 keeps Python's reference counts straight.

PySide6 6.12.0 on CPython 3.11 returns None/True/False from C++ calls without taking a
reference: each call lowers the singleton's count by one until the interpreter aborts
("none_dealloc"). pyproject excludes it; this test fails on any version that does it.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Signal
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

CALLS = 500


class _Emitter(QObject):
    fired = Signal()


class _Rows(QAbstractListModel):
    def rowCount(self, parent: object = None) -> int:
        return 0

    def data(self, index: object, role: int = 0) -> None:
        return None


def _lost(action: object) -> dict[object, int]:
    before = {s: sys.getrefcount(s) for s in (None, True, False)}
    for _ in range(CALLS):
        action()  # type: ignore[operator]
    return {s: before[s] - sys.getrefcount(s) for s in (None, True, False)}


def test_calls_returning_none_or_bool_keep_their_references(qtbot: QtBot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    emitter = _Emitter()
    model = _Rows()
    root = QModelIndex()
    for name, action in [
        ("QLabel.setText", lambda: label.setText("x")),
        ("Signal.emit", emitter.fired.emit),
        ("QWidget.isVisible", label.isVisible),
        (
            "QAbstractItemModel.beginInsertRows",
            lambda: (model.beginInsertRows(root, 0, 0), model.endInsertRows()),
        ),
    ]:
        lost = _lost(action)
        # a few references may move while the loop runs; a leak loses one per call
        assert all(n < CALLS // 10 for n in lost.values()), (name, lost)
