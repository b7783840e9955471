"""Steps through the demo store: its plan session, a menu's action by name, the new child
of a fork, and waiting until the app has settled."""

from __future__ import annotations

from typing import Any

from gui_harness import App, until
from PySide6.QtGui import QAction

PLAN = "Plan the 2.5 release"


def action(menu: Any, name: str) -> QAction:
    found = [a for a in menu.actions() if a.objectName() == name]
    assert found, name
    return found[0]


async def new_child(app: App, before: set[str]) -> str:
    c = app.controller
    sid = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None),
                      what="a new child")
    await until(lambda: c.current == sid and c.transcript.at_end, what="the child open")
    await app.idle()
    return str(sid)


async def settled(app: App) -> None:
    await until(lambda: not app.controller.transcript.running, what="the turn ended")
    await app.idle()
