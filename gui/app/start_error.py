"""A start-up that cannot go on (the store or the host cannot be opened) is said in a
dialog as well as on stderr: someone who started Forkwise from a desktop icon sees no
terminal, and the window would otherwise just vanish.

The dialog is shown with `show()` (never `exec()`) and awaited through an asyncio
future, so the qasync loop keeps running under it: tests find it with
`QApplication.activeModalWidget()` and close it, and Ctrl+C or SIGTERM (see
`app._quit_on_signals`) close it like its Close button does.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

log = logging.getLogger(__name__)

TITLE = "Forkwise cannot start"


def build_start_error(parent: QWidget | None, text: str, advice: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Critical, TITLE, text, QMessageBox.StandardButton.Close,
                      parent)
    box.setObjectName("startErrorDialog")
    box.setInformativeText(advice)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setWindowModality(Qt.WindowModality.ApplicationModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)  # deleted below
    return box


async def show_start_error(box: QMessageBox) -> None:
    """Show `box` and return once it is closed (its button, Escape, the window manager's
    close button, or `box.close()`)."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def finished(_result: int) -> None:
        if not done.done():
            done.set_result(None)

    box.finished.connect(finished)
    box.show()
    box.raise_()
    box.activateWindow()
    log.info("start error dialog shown: %s", box.text())
    try:
        await done
    finally:
        box.hide()
        box.deleteLater()
