"""The agents' folders are first looked at once the session tree is still (or at the
latest a moment after its rows are in): that first look imports the formats on a worker,
which took the GIL from a person's first page-downs. Real host, real folders."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from codex_fixtures import home_with_fork, thread_id
from gui_harness import open_app, until

from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from forkwise.gui.features.agents import source_watch

pytestmark = pytest.mark.gui


def many_sessions(store_dir: Path, count: int = 80) -> None:
    """A store with more sessions than the tree shows at once."""
    store = SessionStore(JsonlBackend(store_dir))
    try:
        for n in range(count):
            store.create(f"s{n:03}", meta={"title": f"session {n}"})
    finally:
        store.close()


async def scrolling(app: Any, seconds: float) -> None:
    """Page up and down in the tree, as a person does, for `seconds`."""
    bar = app.window.tree.verticalScrollBar()
    assert bar.maximum() > 0, "the tree must be able to scroll"
    end = asyncio.get_running_loop().time() + seconds
    down = True
    while asyncio.get_running_loop().time() < end:
        bar.setValue(bar.maximum() if down else 0)
        down = not down
        await asyncio.sleep(0.1)


@pytest.mark.parametrize(("still", "latest"), [(1.5, 30.0), (30.0, 2.0)])
def test_the_agents_folders_wait_for_a_still_tree_or_the_latest_moment(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, still: float, latest: float
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(home_with_fork(tmp_path / "codex-home")))
    monkeypatch.setattr(source_watch, "WATCH_WHEN_STILL", int(still * 1000))
    monkeypatch.setattr(source_watch, "WATCH_AT_THE_LATEST", int(latest * 1000))
    child = f"codex-{thread_id(2)}"
    many_sessions(tmp_path / "store")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            started = asyncio.get_running_loop().time()
            assert app.host.sources.passes == 0  # the tree's rows are in; no look yet
            if still < latest:  # scrolling holds it off; stillness lets it start
                await scrolling(app, 2 * still)
                assert app.host.sources.passes == 0
                assert child not in app.controller.tree.session_ids()
                await until(lambda: child in app.controller.tree.session_ids(), what="watched")
                assert asyncio.get_running_loop().time() - started >= 2 * still
            else:  # a person who keeps scrolling gets the agents' sessions all the same
                looking = asyncio.ensure_future(scrolling(app, 3 * latest))
                await until(lambda: child in app.controller.tree.session_ids(), what="watched")
                assert not looking.done()
                looking.cancel()

    aloop(scenario())
