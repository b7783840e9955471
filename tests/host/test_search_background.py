"""The search index is built in the background right after an import (with
`search/indexing` progress), so the first search finds it current; closing the index (a
host quitting) halts a build after the batch it is writing, and the next index builds it
whole."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from forkwise.core.host.host import Host
from forkwise.core.host.import_ledger import ImportLedger
from forkwise.core.host.importing import discover, import_sources
from forkwise.core.store import search_build
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.search_index import SearchIndex
from forkwise.core.store.session_store import SessionStore

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
from claude_fixtures import Transcript, det_uuid

SESSIONS = 40


def claude_folder(root: Path) -> Path:
    folder = root / "claude" / "projects" / "p"
    for i in range(SESSIONS):
        t = Transcript(det_uuid(f"session {i}"))
        t.exchange(f"where is the axolotl {i}", f"in the pond {i}")
        t.exchange(f"and the heron {i}", f"on the bank {i}")
        t.write(folder / f"{t.session_id}.jsonl")
    return root / "claude"


@pytest.mark.asyncio
async def test_an_import_builds_the_search_index_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_build, "BATCH_ROWS", 20)  # progress in several steps
    folder = claude_folder(tmp_path)
    host = Host.open(tmp_path / "store")
    notes: list[dict[str, Any]] = []
    host.subscribe(lambda note: notes.append(dict(note)))
    report = await host.import_sources("claude", [str(folder)])
    assert len(report["imported"]) == SESSIONS
    await host.search_built()
    progress = [(n["done"], n["total"]) for n in notes if n["kind"] == "search/indexing"]
    assert len(progress) > 1
    assert progress[-1] == (SESSIONS, SESSIONS)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    # the first search finds the index current: it does not read the logs again
    assert host.search_index.ready
    hits = await host.search("axolotl", limit=500)
    assert len({hit["sessionId"] for hit in hits}) == SESSIONS
    await host.close()


@pytest.mark.asyncio
async def test_a_one_shot_import_builds_no_search_index(tmp_path: Path) -> None:
    """Nobody listens (a command that imports and ends): no build is started."""
    host = Host.open(tmp_path / "store")
    await host.import_sources("claude", [str(claude_folder(tmp_path))])
    assert not host.search_index.ready
    await host.close()
    assert not (tmp_path / "store" / "search.sqlite").exists()


def test_closing_the_index_halts_a_build_after_its_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_build, "BATCH_ROWS", 20)
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    files = discover("claude", [claude_folder(tmp_path)], {}, tmp_path)
    import_sources(store, files, ImportLedger(None))
    path = tmp_path / "store" / "search.sqlite"
    index = SearchIndex(path)
    batches: list[int] = []
    closed = threading.Event()

    def progress(done: int, total: int) -> None:  # on the build's thread, after a batch
        batches.append(done)
        if len(batches) == 1:
            # `close` from another thread, as a host quitting: it waits for this batch
            threading.Thread(target=lambda: (index.close(), closed.set())).start()

    with pytest.raises(search_build.Stopped):
        index.sync(store, progress)
    assert closed.wait(10)
    assert batches
    assert batches[-1] < SESSIONS  # stopped before the end
    assert not index.ready
    assert not list(path.parent.glob(".search.sqlite.build*"))  # nothing half built kept
    # a new index (the next host) builds it whole
    again = SearchIndex(path)
    assert again.sync(store) == SESSIONS
    assert len({h.session_id for h in again.search("axolotl", 500)}) == SESSIONS
    again.close()
    store.close()
