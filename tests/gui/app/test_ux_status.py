"""Status texts (the UX pass): the status bar says what is running ("Importing
sessions…"), where it said "Working…" for everything. Real window, host and store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

pytestmark = pytest.mark.gui


def test_the_status_bar_says_what_runs(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            gate = asyncio.Event()

            async def held_import() -> Any:  # a real import, started when the test says
                await gate.wait()
                return await app.client.import_files([str(tmp_path / "nothing-here")])

            c.ops.run(held_import(), lambda _r: None, lambda _e: None,
                      what="Importing sessions")
            await until(w.busy_label.text, what="busy")
            assert w.busy_label.text() == "Importing sessions…"
            c.ops.run(app.client.search("changelog"), lambda _r: None, what="Searching")
            assert w.busy_label.text() == "Searching…"  # the latest
            await until(lambda: w.busy_label.text() == "Importing sessions…", what="searched")
            gate.set()
            await until(lambda: w.busy_label.text() == "", what="idle")

    aloop(scenario())
