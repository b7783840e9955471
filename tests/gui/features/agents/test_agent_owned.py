"""An imported session still belongs to the agent that writes it: a turn Claude Code is
still writing is not stopped from here (nothing is written into Forkwise's copy), and when
Claude Code deletes its file the origin line says so and that the copy is kept. Real
window, real Claude Code files imported through the host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import open_app, qt_events, until

pytestmark = pytest.mark.gui


def writing(root: Path) -> Path:
    """A Claude Code session whose last prompt is being answered (a fresh file, its last
    turn open: Claude Code is still writing it)."""
    t = cf.Transcript(cf.SID)
    t.exchange("What does the build do?", "It compiles and runs the tests.")
    t.user("Now run the slow tests, please")
    t.assistant([{"type": "tool_use", "id": "toolu_01slow", "name": "Bash",
                  "input": {"command": "pytest -m slow", "description": "slow tests"}}],
                stop="tool_use")  # its result is not in yet
    return t.write(cf.project_file(root, t))


def test_a_turn_its_agent_is_writing_has_no_stop_and_nothing_is_written(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        path = writing(tmp_path / "claude")
        async with open_app(tmp_path) as app:
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            sid = f"claude-{cf.SID}"
            await until(lambda: sid in app.controller.tree.session_ids(), what="the row")
            assert (app.controller.tree.summary(sid) or {})["running"]  # the agent's turn
            await app.open(sid)
            await app.idle()
            w = app.window
            stop = w.composer.stop_button
            assert app.controller.transcript.running
            assert not stop.isEnabled()
            assert not w.action_stop.isEnabled()
            assert "Claude Code is writing this turn" in stop.toolTip()
            assert "Claude Code is writing this turn" in w.action_stop.toolTip()
            before = app.log(sid)
            w.action_stop.trigger()  # Ctrl+. and the menu entry: nothing happens
            stop.click()
            app.controller.cancel()  # nor when asked directly
            await app.idle()
            qt_events()
            assert app.log(sid) == before
            assert not any(e.get("type") == "turn/end" for e in before[-3:])

            # a turn Forkwise runs in a session of its own can still be stopped
            w.running(True)
            assert app.controller.transcript.agents_turn
            app.controller.open_session(app.sid("Plan the 2.5 release"))
            w.running(True)
            assert stop.isEnabled()
            assert w.action_stop.isEnabled()
            assert stop.toolTip() == "Cancel the running turn"

    aloop(scenario())


def test_the_origin_line_says_the_source_file_is_gone_and_the_copy_kept(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        path = writing(tmp_path / "claude")
        async with open_app(tmp_path) as app:
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            sid = f"claude-{cf.SID}"
            await until(lambda: sid in app.controller.tree.session_ids(), what="the row")
            await app.open(sid)
            origin = app.window.findChild(type(app.window.header_label), "originLabel")
            assert origin is not None
            await until(origin.isVisible, what="the origin line")
            assert origin.text() == f"Imported from Claude Code: {path}"
            path.unlink()  # Claude Code deletes sessions after 30 days
            app.controller.open_session(app.sid("Plan the 2.5 release"))
            await app.idle()
            await app.open(sid)
            await until(lambda: "gone" in origin.text(), what="the origin line anew")
            assert origin.text() == (f"Imported from Claude Code — the source file is gone; "
                                     f"this copy is kept: {path}")
            assert "copy is kept" in origin.toolTip()
            assert app.controller.transcript.builder.entries  # the copy reads whole
            assert app.rows("user", "Now run the slow tests")

    aloop(scenario())
