"""A scroll area's viewport as a Python object, without PySide's subclass search.

PySide 6.11 creates its Python classes (and every enum of each) on first use. When a
C++-made object comes back through a method typed `QWidget *` — `QAbstractScrollArea.
viewport()` — it looks for the most derived class among all QWidget subclasses, which
creates about 65 of them with their enums: 8 ms of CPU the first time, on the way to the
window's first frame (measured offscreen, PySide 6.11.3). `findChild` by the viewport's
object name returns the same object through the QObject path, which needs no search; the
view keeps that wrapper, so that its later `viewport()` calls return it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

#: the object name Qt gives the viewport a scroll area makes itself
VIEWPORT_NAME = "qt_scrollarea_viewport"


def adopt_viewport(view: QAbstractScrollArea) -> QWidget:
    """`view.viewport()`, wrapped by name when it is Qt's own (else as `viewport()` does);
    kept on the view as `_viewport_wrapper` so that the wrapper outlives this call."""
    found = view.findChild(QWidget, VIEWPORT_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    viewport = found if found is not None else view.viewport()
    view._viewport_wrapper = viewport  # type: ignore[attr-defined]
    return viewport
