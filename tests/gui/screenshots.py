"""Take the README screenshots: `xvfb-run -s "-screen 0 1280x800x24" python tests/gui/screenshots.py OUT`.

Drives the real app (in-process host, demo store in a temp dir, offline provider) through
the main scenarios and saves one PNG per scenario. Not a test (no `test_` prefix).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_API", "pyside6")

import PySide6.QtWidgets  # noqa: F401
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from forkwise.core.client.local import OpenedStore
from forkwise.core.demo import build_demo_store
from forkwise.gui.app.app import open_client
from forkwise.gui.app.features import FEATURES
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.notify import Notifier
from forkwise.gui.shell.main_window import MainWindow


@dataclass
class ShotApp:
    """The real app the screenshot scripts drive: its client, controller and window."""

    opened: OpenedStore
    controller: Controller
    window: MainWindow


async def start_app(store: Path, settings_dir: Path) -> ShotApp:
    """The app on `store` as a person starts it (in-process host, every feature), 1280 by 800,
    its settings in `settings_dir`."""
    opened = await open_client(store, None)
    controller = Controller(opened.client, Notifier())
    settings = QSettings(str(settings_dir / "gui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(controller, settings, store_label=str(store), features=FEATURES)
    window.resize(1280, 800)
    window.show()
    controller.start()
    return ShotApp(opened, controller, window)


def run_script(main: Callable[[Path], Coroutine[Any, Any, None]], default: str) -> None:
    """Run a screenshot script's `main(OUT)` on a qasync loop (OUT: the first argument,
    else `default`)."""
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(Path(sys.argv[1] if len(sys.argv) > 1 else default)))


async def settle(controller: Controller, seconds: float = 0.3) -> None:
    await controller.ops.wait_idle()
    await asyncio.sleep(seconds)


def title_id(controller: Controller, title: str) -> str:
    for sid in controller.tree.session_ids():
        if (controller.tree.summary(sid) or {}).get("title") == title:
            return sid
    raise KeyError(title)


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    store = Path(tempfile.mkdtemp(prefix="forkwise-shots-"))
    build_demo_store(store)
    shot = await start_app(store, store)
    opened, controller, window = shot.opened, shot.controller, shot.window
    await settle(controller)
    plan = title_id(controller, "Plan the 2.5 release")
    window.select_session(plan)
    await settle(controller)
    window.grab().save(str(out / "tree-with-lineage.png"))

    view = window.transcript
    users = [i for i, e in enumerate(controller.transcript.builder.entries) if e.kind == "user"]

    async def menu_shot(row: int, name: str) -> None:
        view.scrollTo(controller.transcript.index(row))
        await asyncio.sleep(0.2)
        pos = view.menu_position(row)
        event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos,
                                  view.viewport().mapToGlobal(pos))
        QApplication.sendEvent(view.viewport(), event)
        await asyncio.sleep(0.4)
        QApplication.primaryScreen().grabWindow(0).save(str(out / name))
        if view.last_menu is not None:
            view.last_menu.close()
        await asyncio.sleep(0.2)

    await menu_shot(users[1], "message-context-menu.png")

    window.action_fork.trigger()
    await settle(controller, 0.6)
    window.grab().save(str(out / "child-opened-after-fork.png"))

    waiting = title_id(controller, "Clean up the build folder")
    window.select_session(waiting)
    await settle(controller)
    view.follow_to_end()
    await settle(controller, 0.4)
    window.grab().save(str(out / "approval-pending.png"))
    users = [i for i, e in enumerate(controller.transcript.builder.entries) if e.kind == "user"]
    await menu_shot(users[-1], "message-menu-running-turn.png")
    controller.fork_from_message(users[-1])
    await settle(controller, 0.5)
    window.grab().save(str(out / "error-shown.png"))

    window.close()
    await controller.stop()
    await opened.close()


if __name__ == "__main__":
    run_script(main, "/tmp/shots")
