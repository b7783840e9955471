"""Reading a transcript as a person does (the UX pass): a subagent's transcript says who
started it, as the tree's tooltip does, not that it was "forked". Real window and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

from forkwise.gui.fork_header import ForkHeader

pytestmark = pytest.mark.gui

PLAN = "Plan the 2.5 release"
SUBAGENT = "Subagent: list the release scripts"
SHORTER = "2.5 release — two-week schedule"


def test_a_subagent_says_who_started_it(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid(SUBAGENT))
            header = await until(lambda: w.transcript.findChild(ForkHeader), what="header")
            text = header.link.text()
            assert text.startswith("<b>Subagent started by</b>"), text
            assert PLAN in text
            assert header.link.accessibleName().startswith(f"Subagent started by {PLAN}")
            # a fork still says it was forked
            await app.open(app.sid(SHORTER))
            await until(lambda: [h for h in w.transcript.findChildren(ForkHeader)
                                 if h.link.text().startswith("<b>Forked from</b>")],
                        what="the fork's header")

    aloop(scenario())
