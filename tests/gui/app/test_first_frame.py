"""The window's first frame leaves out what it does not show (issue 19): the transcript view
and its model, the banner, the client's modules. They come right after the tree's first
rows, and the window then works as before: the transcript in the placeholder's place, Tab
going list, transcript, composer, the shortcuts working.

The app starts in a fresh process (this one has every module imported already); it prints
what it saw at the main window's first Paint event and once the store's listing is in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import run_on_demo
from PySide6.QtCore import QSettings
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QProxyStyle, QStyle, QTreeView

from forkwise.gui.models.session_rows import ACTIVITY, COLUMNS, MESSAGES
from forkwise.gui.sessions.tree_columns import KEY, PROVISIONAL_MARGIN, TreeColumns, fitted_width

pytestmark = pytest.mark.gui

SCRIPT = r"""
import json, os, sys
from forkwise.gui.app import app as A
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

seen = {}

def focus_order(window):
    names, w = [], window.filter_box
    for _ in range(300):
        policy = w.focusPolicy()
        if (policy & Qt.FocusPolicy.TabFocus) == Qt.FocusPolicy.TabFocus and w.isVisible() \
                and w.isEnabled() and w.objectName():
            names.append(w.objectName())
        w = w.nextInFocusChain()
        if w is window.filter_box:
            break
    return names

def geometry(widget):
    r = widget.geometry()
    return [r.x(), r.y(), r.width(), r.height()]

class FirstPaint(QObject):
    def __init__(self, window):
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "first" not in seen:
            w = self.window
            slot = w.findChild(QWidget, "transcriptSlot")
            seen["first"] = {
                "modules": sorted(m for m in sys.modules if m.startswith("forkwise")),
                "transcript": w.findChild(QWidget, "transcript") is not None,
                "banner": w.findChild(QWidget, "banner") is not None,
                "slot": geometry(slot) if slot is not None and slot.isVisible() else None,
            }
        return False

def after(window):
    t = window.findChild(QWidget, "transcript")
    slot = window.findChild(QWidget, "transcriptSlot")
    seen["after"] = {
        "transcript": geometry(t) if t is not None and t.isVisible() else None,
        "slot": slot is not None and slot.isVisible(),
        "slot kept": window.transcript_slot is not None,  # a reference to a deleted widget
        "banner": window.findChild(QWidget, "banner") is not None,
        "rows": window.controller.transcript.rowCount(),
        "order": focus_order(window),
    }
    window.activateWindow()
    window.tree.setFocus()
    QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)  # Filter…
    seen["after"]["find_focus"] = QApplication.focusWidget() is window.filter_box
    window.close()

build = A._build_window

def watched(*args, **kwargs):
    window = build(*args, **kwargs)
    window._first_paint = FirstPaint(window)
    window.installEventFilter(window._first_paint)
    window.controller.treeLoaded.connect(
        lambda _n: QTimer.singleShot(500, lambda: after(window)))
    return window

A._build_window = watched
status = A.run(sys.argv[1], None, None)
print(json.dumps({"status": status, **seen}))
"""


def test_first_frame_leaves_out_the_transcript_which_then_takes_its_place(
        tmp_path: Path) -> None:
    seen = run_on_demo(tmp_path, SCRIPT)

    first = seen["first"]
    for module in ("forkwise.gui.transcript.transcript_view", "forkwise.gui.models.transcript_model",
                   "forkwise.gui.features.agents.agents", "forkwise.core.client.api",
                   "forkwise.core.client.local",
                   # the window's and the agents' parts built after the first frame
                   "forkwise.gui.shell.window_wiring", "forkwise.gui.shell.tree_keeping",
                   "forkwise.gui.shell.filter_page", "forkwise.gui.features.agents.continue_in",
                   "forkwise.gui.features.agents.import_dialogs", "forkwise.gui.features.agents.source_watch"):
        assert module not in first["modules"], f"{module} imported before the first frame"
    assert "forkwise.gui.shell.main_window" in first["modules"]  # the watch saw the real window
    assert not first["transcript"]
    assert not first["banner"]
    assert first["slot"] is not None, "a placeholder holds the transcript's place"

    later = seen["after"]
    assert later["transcript"] == first["slot"], "the transcript where its placeholder was"
    assert not later["slot"]
    assert not later["slot kept"]
    assert later["banner"]
    assert later["rows"] > 0  # the newest session was opened into it
    order = later["order"]
    assert order.index("sessionTree") < order.index("transcript") < order.index("composer")
    assert later["find_focus"], "Ctrl+F puts the keyboard in the filter"


#: at the main window's first Paint event: its actions and menus; at the first input the app
#: handles after that frame (a zero timer queued then): the same, and shortcuts pressed
SHORTCUTS = r"""
import json, sys
from forkwise.gui.app import app as A
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

seen = {}

def actions(window):
    return sorted((a.objectName(), a.shortcut().toString()) for a in window.actions()
                  if a.objectName())

def menus(window):
    return {m.objectName(): [a.objectName() or a.text() or "-" for a in m.actions()]
            for m in window.menuBar().findChildren(QMenu) if m.objectName().startswith("menu")}

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "frame" not in seen:
            seen["frame"] = {"actions": actions(obj), "menus": sorted(menus(obj))}
        return False

def first_input(window):
    seen["input"] = {"actions": actions(window), "menus": menus(window)}
    window.activateWindow()
    window.tree.setFocus()
    QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)  # Filter…
    seen["input"]["find"] = QApplication.focusWidget() is window.filter_box
    QTest.keyClick(window.filter_box, Qt.Key.Key_A)
    QTest.keyClick(window.filter_box, Qt.Key.Key_Escape)  # the field's own keys: clears it
    seen["input"]["escape"] = window.filter_box.text() == ""
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)  # Search all sessions…
    seen["input"]["search"] = window.search_panel is not None and window.search_panel.isVisible()
    window.close()

build, paint_now = A._build_window, A._paint_now

def watched(*args, **kwargs):
    window = build(*args, **kwargs)
    window._first_paint = FirstPaint(window)
    window.installEventFilter(window._first_paint)
    return window

def painted(window, *args, **kwargs):
    paint_now(window, *args, **kwargs)
    QTimer.singleShot(0, lambda: first_input(window))

A._build_window, A._paint_now = watched, painted
status = A.run(sys.argv[1], None, None)
print(json.dumps({"status": status, **seen}))
"""


def test_the_shortcuts_and_menus_are_there_at_the_first_input_after_the_first_frame(
        tmp_path: Path) -> None:
    """The first frame is painted before the actions only menus and shortcuts reach (and
    the menus' entries) exist; they are built before the app handles any input."""
    seen = run_on_demo(tmp_path, SHORTCUTS)
    # the first frame has the tool bar's actions and the menu bar's titles
    assert seen["frame"]["menus"] == ["menuEdit", "menuFile", "menuHelp", "menuSession"]
    frame_actions = dict(seen["frame"]["actions"])
    for name in ("actionNewSession", "actionForkSession", "actionStop", "actionPreferences"):
        assert name in frame_actions
    now = dict(seen["input"]["actions"])
    assert now == {
        "actionNewSession": "Ctrl+N", "actionForkSession": "Ctrl+Shift+K",
        "actionStop": "Ctrl+.", "actionPreferences": "Ctrl+,", "actionFind": "Ctrl+L",
        "actionSearchAll": "Ctrl+Shift+F", "actionUseConfiguredModel": "",
        "actionQuit": "Ctrl+Q", "actionAbout": "", "actionDeleteSession": "Del",
        "actionDuplicateSession": "Ctrl+D", "actionApprove": "Ctrl+Shift+Y",
        "actionDeny": "Ctrl+Shift+N", "actionRenameSession": "F2",
        "actionPreviousSibling": "Alt+Left", "actionNextSibling": "Alt+Right",
        "actionCompareSessions": "Ctrl+Shift+D", "actionFindInSession": "Ctrl+F",
        "actionFindNext": "F3", "actionFindPrevious": "Shift+F3",
        "actionExportSession": "Ctrl+Shift+E", "actionUndo": "Ctrl+Z", "actionShowTrash": "",
        "actionShowReasoning": "Ctrl+Shift+R",
    }
    assert seen["input"]["menus"] == {
        "menuFile": ["actionNewSession", "actionExportSession", "-", "actionPreferences", "-",
                     "actionQuit"],
        "menuEdit": ["actionUndo", "-", "actionFindInSession", "actionFindNext",
                     "actionFindPrevious", "actionFind", "actionSearchAll", "-",
                     "actionShowReasoning"],
        "menuSession": ["actionForkSession", "actionRenameSession", "-",
                        "actionPreviousSibling", "actionNextSibling",
                        "actionCompareSessions", "-", "actionStop",
                        "actionUseConfiguredModel", "-", "actionApprove", "actionDeny", "-",
                        "actionDuplicateSession", "actionDeleteSession", "actionShowTrash"],
        "menuHelp": ["actionAbout"],
    }
    assert seen["input"]["find"], "Ctrl+F puts the keyboard in the filter"
    assert seen["input"]["escape"], "Escape clears the filter (its field's own keys)"
    assert seen["input"]["search"], "Ctrl+Shift+F opens the search"


def test_column_widths_take_the_styles_own_focus_margin_after_the_first_frame(
        qapp: Any, tmp_path: Path) -> None:
    """Fitted with Qt's common focus margin before the first frame, the tree's columns are
    refitted with the style's own (`TreeColumns.settle`): here a style with a wider one.
    A width the person set meanwhile stays, and settling saves nothing."""

    class WideFocus(QProxyStyle):
        def pixelMetric(self, metric: QStyle.PixelMetric, option: Any = None,
                        widget: Any = None) -> int:
            if metric == QStyle.PixelMetric.PM_FocusFrameHMargin:
                return 12
            return super().pixelMetric(metric, option, widget)

    tree = QTreeView()
    model = QStandardItemModel(0, len(COLUMNS), tree)
    model.setHorizontalHeaderLabels(list(COLUMNS))
    tree.setModel(model)
    style = WideFocus()
    tree.setStyle(style)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
    columns = TreeColumns(tree, settings)
    header = tree.header()
    provisional = header.sectionSize(ACTIVITY)
    assert provisional == fitted_width(tree, ACTIVITY, PROVISIONAL_MARGIN)
    header.resizeSection(MESSAGES, 150)  # the person's width
    settings.remove(KEY)

    columns.settle()

    assert header.sectionSize(ACTIVITY) == fitted_width(tree, ACTIVITY) > provisional
    assert header.sectionSize(MESSAGES) == 150
    assert settings.value(KEY) is None
    columns.settle()  # once only
    assert header.sectionSize(ACTIVITY) == fitted_width(tree, ACTIVITY)
    tree.deleteLater()
