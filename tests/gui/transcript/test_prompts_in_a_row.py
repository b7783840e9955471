"""Four prompts in a row through the client into a fork of a fork of an imported session,
shown in the window while its turns run, then waiting for the session to stop running.

A draft of this test hung about one run in three (issue 19): it let Qt catch up with
`QApplication.processEvents()` while the turns ran, which on the qasync loop runs another
task's wake-up inside the scenario's step, where asyncio refuses it and it is lost
(scenario_watchdog). `qt_events()` runs what Qt has pending and no asyncio callback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from imported_scene import claude_session, imported, rewound_branch

from forkwise.core.log.events import TURN_END

pytestmark = pytest.mark.gui

PROMPTS = ("first question", "second question", "third question", "fourth question")


def test_four_prompts_in_a_row_into_a_fork_of_a_fork_all_run_and_the_session_stops(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c = app.controller
            await imported(app, claude_session(tmp_path / "claude"))
            child = await app.client.fork(rewound_branch(app))  # a fork of the rewind's fork
            c.tree.upsert(child)
            sid = child["id"]
            # the imported model has no provider here: the offline one streams real turns
            await app.client.set_model(sid, "offline", "forkwise-offline")
            await app.open(sid)

            def ends() -> list[dict[str, Any]]:
                return [e for e in app.log(sid) if e.get("type") == TURN_END]

            copied = len(ends())  # the turns the fork copied from its sources
            for text in PROMPTS:
                await app.client.prompt(sid, text)
                await app.idle()
                qt_events()  # the window catches up while the turns run
            def answered() -> bool:  # the offline model echoes each prompt
                answers = [e.text for e in app.entries if e.kind == "assistant"]
                return all(any(f"“{text}”" in a for a in answers) for text in PROMPTS)

            await until(answered, what="the four answers shown")
            await until(lambda: not (c.tree.summary(sid) or {}).get("running")
                        and not c.transcript.running, what="the session stopped running")
            assert [e["status"] for e in ends()[copied:]] == ["completed"] * len(PROMPTS)

    aloop(scenario())
