"""A session file that cannot be read shows as a disabled row that says why; the rest of
the store keeps working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import Qt

from forkwise.core.demo import build_demo_store

pytestmark = pytest.mark.gui

BROKEN = (
    b'{"type":"session","version":1,"id":"broken","created":"2026-01-01T00:00:00Z",'
    b'"cwd":"","parentSession":null,"seedLength":0,"meta":{}}\n'
    b'{"seq":1,"type":"turn/start","ts":"2026-01-01T00:00:01Z","turn":"t1"}\n'
    b"this line is not JSON\n"
    b'{"seq":3,"type":"turn/end","ts":"2026-01-01T00:00:03Z","turn":"t1","status":"completed"}\n'
)


def test_unreadable_session_is_a_disabled_row_with_the_reason(aloop: Any, tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    (store / "sessions" / "broken.jsonl").write_bytes(BROKEN)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            tree = app.controller.tree
            index = tree.index_for("broken")
            assert index.isValid()
            assert not tree.flags(index) & Qt.ItemFlag.ItemIsEnabled
            assert tree.data(index, Qt.ItemDataRole.DisplayRole) == "broken — cannot be read"
            tip = tree.data(index, Qt.ItemDataRole.ToolTipRole)
            assert "Could not be read" in tip
            assert "line 3" in tip
            # everything else still works: a fork of a healthy session
            plan = app.sid("Plan the 2.5 release")
            before = set(tree.session_ids())
            await app.open(plan)
            app.window.action_fork.trigger()
            await until(lambda: set(tree.session_ids()) - before, what="the child")
            assert app.notifier.errors() == []
            assert (store / "sessions" / "broken.jsonl").read_bytes() == BROKEN

    aloop(scenario())
