"""The Cost column of rows an import brought in: their usage comes from one listing with
usage (the summaries), not from a call per session, which served each session's log and
left it loaded in the host (then saved again to the index when the app quit). Real Claude
Code files in a watched folder, the host's own watch and import."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from gui_harness import claude_sessions, open_app, until

from forkwise.core.client.reports import usage_report

pytestmark = pytest.mark.gui

#: Claude Code sessions in the watched folder
SESSIONS = 24


def test_an_imports_rows_get_their_usage_without_loading_their_logs(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sids = [str(uuid.UUID(int=n + 1)) for n in range(SESSIONS)]
    claude_sessions(tmp_path, sids, monkeypatch)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            tree = app.controller.tree
            ids = [f"claude-{sid}" for sid in sids]  # as the import names them

            def priced() -> list[str]:
                return [s for s in ids if "usage" in (tree.summary(s) or {})]

            await until(lambda: len(priced()) == SESSIONS, what="every imported row's usage")
            await until(lambda: not app.controller.ops.busy, what="no operation running")
            loaded = set(app.host.store._records)  # what the host's close saves again
            assert len(loaded & set(ids)) <= 2, sorted(loaded & set(ids))
            # the usage shown is the session's own, as the session's own call says
            for sid in ids[:3]:
                own = usage_report(await app.client.usage(sid))["own"]
                assert tree.summary(sid)["usage"]["own"] == own

    aloop(scenario())
