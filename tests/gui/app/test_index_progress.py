"""Rebuilding the summary index of a store shows progress and leaves the index behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forkwise.core.bench.synth import write_store
from forkwise.core.client.local import open_store
from forkwise.gui.app.index_progress import build_index

pytestmark = pytest.mark.gui


def test_index_rebuild_reports_progress_to_the_end(aloop: Any, tmp_path: Path) -> None:
    write_store(tmp_path, sessions=600, events_per_session=20)
    seen: list[tuple[int, int]] = []

    async def scenario() -> int:
        opened = await open_store(tmp_path, serve=False)
        try:
            return await build_index(opened.client, lambda d, t: seen.append((d, t)))
        finally:
            await opened.close()

    assert aloop(scenario()) == 600
    assert seen[-1] == (600, 600)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert len(seen) >= 3  # every 250 sessions, and the end
    assert (tmp_path / "index.json").exists()
    # with the index in place, nothing is rebuilt and nothing is reported
    seen.clear()

    async def again() -> int:
        opened = await open_store(tmp_path, serve=False)
        try:
            return await build_index(opened.client, lambda d, t: seen.append((d, t)))
        finally:
            await opened.close()

    assert aloop(again()) == 600
    assert seen == []
