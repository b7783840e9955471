"""The status bar tells the search index's build in the background after an import (the
host's `search/indexing` notifications): how far it got while it runs, nothing once it is
done. Real Claude Code files in a watched folder, the host's own watch, import and build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import claude_sessions, open_app, until

from forkwise.core.client.api import SEARCH_INDEXING
from forkwise.gui.features.agents.source_watch import INDEXING

pytestmark = pytest.mark.gui


def test_the_status_bar_shows_the_search_index_build_until_it_is_done(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_sessions(tmp_path, [cf.SID, cf.OTHER], monkeypatch)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            notes: list[dict[str, Any]] = []
            await app.client.subscribe(notes.append)
            bar = app.window.statusBar()
            shown: list[str] = []
            bar.messageChanged.connect(shown.append)
            # the watch's first look imports both files; the host then builds the index
            built = await until(
                lambda: [n for n in notes if n["kind"] == SEARCH_INDEXING
                         and n["done"] == n["total"]],
                what="the search index built after the import",
            )  # fmt: skip
            assert built[-1]["total"] == 2
            await until(lambda: not bar.currentMessage().startswith(INDEXING),
                        what="the build's words gone")  # fmt: skip
            # a longer build, part way: the host's notification reaches the status bar
            app.host.notify({"kind": SEARCH_INDEXING, "done": 1200, "total": 5000})
            await until(lambda: bar.currentMessage() == f"{INDEXING} 1,200 of 5,000 sessions",
                        what="the build's progress shown")  # fmt: skip
            app.window.grab().save(str(tmp_path / "indexing.png"))
            app.host.notify({"kind": SEARCH_INDEXING, "done": 5000, "total": 5000})
            await until(lambda: bar.currentMessage() == "", what="the words gone at the end")
            # another message stays when the build ends
            app.host.notify({"kind": SEARCH_INDEXING, "done": 1, "total": 9})
            await until(lambda: bar.currentMessage().startswith(INDEXING), what="shown again")
            bar.showMessage("Exported to somewhere")
            app.host.notify({"kind": SEARCH_INDEXING, "done": 9, "total": 9})
            app.host.notify({"kind": "import/progress", "done": 0, "total": 1, "path": "x"})
            await until(lambda: any(m.startswith("Bringing in") for m in shown),
                        what="a later notification handled")  # fmt: skip
            after = shown[shown.index("Exported to somewhere") + 1 :]
            assert after == ["Bringing in the agents' sessions… 0 of 1 files"], after

    aloop(scenario())
