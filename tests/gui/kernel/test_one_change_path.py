"""One write path: an op's result reaches the tree the way the host's notification does,
through the session service's `apply_row` / `apply_removed` and its one change signal
(`sessionChanged`); no feature patches the tree model itself."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

pytestmark = pytest.mark.gui

GUI = Path(__file__).resolve().parents[3] / "gui"
PLAN = "Plan the 2.5 release"


def test_only_the_session_service_puts_rows_into_the_tree() -> None:
    patched = []
    for path in GUI.rglob("*.py"):
        if path.parent.name == "models" or path.name == "controller.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("upsert", "remove")
                    and isinstance(node.func.value, ast.Attribute)
                    and node.func.value.attr == "tree"):
                patched.append(f"{path.relative_to(GUI)}:{node.lineno}")
    assert patched == []


def test_a_rename_and_a_delete_reach_the_tree_through_the_change_signal(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c, w = app.controller, app.window
            changed: list[str] = []
            c.sessionChanged.connect(changed.append)
            sid = app.sid(PLAN)
            w.features["branches"].rename_to(sid, "Plan, renamed")
            await until(lambda: c.tree.title_of(sid) == "Plan, renamed", what="renamed")
            assert sid in changed
            changed.clear()
            w.features["housekeeping"].delete(sid)
            await until(lambda: c.tree.summary(sid) is None, what="deleted")
            await app.idle()
            assert sid in changed

    aloop(scenario())
