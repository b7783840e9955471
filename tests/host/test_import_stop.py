"""A host that closes while a long import runs stops it before its next file: closing does
not wait for the rest. What was imported is durable, indexed and consistent; the files not
read are imported by the next import. And an import saves the store's index once, not at
each batch of sessions."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.host.host import Host
from forkwise.core.host.import_ledger import ImportLedger
from forkwise.core.host.importing import discover, import_sources
from forkwise.core.store.backends import catalogue
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
from claude_fixtures import Transcript, det_uuid

FILES = 300


def claude_folder(root: Path, n: int = FILES) -> Path:
    folder = root / "claude" / "projects" / "p"
    for i in range(n):
        t = Transcript(det_uuid(f"session {i}"))
        t.exchange(f"question {i}", f"answer {i}")
        t.write(folder / f"{t.session_id}.jsonl")
    return root / "claude"


def stored(store: Path) -> set[str]:
    return {p.name[: -len(".jsonl")] for p in (store / "sessions").glob("*.jsonl")}


def test_an_import_stopped_between_files_keeps_what_it_stored_and_the_rest_comes_next(
    tmp_path: Path,
) -> None:
    files = discover("claude", [claude_folder(tmp_path)], {}, tmp_path)
    assert len(files) == FILES
    stop = threading.Event()

    def progress(done: int, total: int, path: str) -> None:
        if done == 100:
            stop.set()

    root = tmp_path / "store"
    store = SessionStore(JsonlBackend(root))
    ledger = ImportLedger(root / "imports.json")
    report = import_sources(store, files, ledger, progress, stop)
    assert report.stopped
    assert len(report.imported) == 100
    store.close()
    # what it imported is on disk and indexed, every log whole
    assert stored(root) == set(report.imported)
    entries = orjson.loads((root / "index.json").read_bytes())["sessions"]
    assert set(entries) == set(report.imported)
    again = SessionStore(JsonlBackend(root))
    assert [s.id for s in again.list() if s.error is None] == sorted(report.imported)
    # the next import reads the files the first did not
    ledger = ImportLedger(root / "imports.json")
    rest = import_sources(again, files, ledger)
    again.close()
    assert not rest.stopped
    assert set(rest.imported).isdisjoint(report.imported)
    assert len(rest.imported) == FILES - 100
    assert len(stored(root)) == FILES


def test_an_import_saves_the_index_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is written when the import ends, not once per batch of sessions (each
    write is the whole index: an import of n sessions wrote O(n²) bytes)."""
    files = discover("claude", [claude_folder(tmp_path)], {}, tmp_path)
    writes: list[int] = []
    real = catalogue.Catalogue._write_all

    def counted(self: catalogue.Catalogue, entries: dict[str, Any]) -> None:
        writes.append(len(entries))
        real(self, entries)

    monkeypatch.setattr(catalogue.Catalogue, "_write_all", counted)
    root = tmp_path / "store"
    store = SessionStore(JsonlBackend(root))
    report = import_sources(store, files, ImportLedger(root / "imports.json"))
    assert len(report.imported) == FILES
    assert writes == [FILES]
    store.close()


@pytest.mark.asyncio
async def test_a_host_closing_during_an_import_stops_it(tmp_path: Path) -> None:
    folder = claude_folder(tmp_path)
    root = tmp_path / "store"
    host = Host(SessionStore(JsonlBackend(root)))
    closing: list[asyncio.Task[None]] = []

    def listener(note: dict[str, Any]) -> None:
        if note.get("kind") == "import/progress" and note["done"] >= 20 and not closing:
            closing.append(asyncio.get_running_loop().create_task(host.close()))

    host.subscribe(listener)
    report = await host.import_sources("claude", [str(folder)])
    assert closing
    await closing[0]
    assert report.get("stopped") is True
    assert 20 <= len(report["imported"]) < FILES
    assert stored(root) == set(report["imported"])
    # the store closed consistent: a new host lists each imported session, and imports
    # the rest of the folder
    host = Host(SessionStore(JsonlBackend(root)))
    listed = await host.list_sessions()
    assert {row["id"] for row in listed} == set(report["imported"])
    assert all(row["error"] is None for row in listed)
    rest = await host.import_sources("claude", [str(folder)])
    await host.close()
    assert len(report["imported"]) + len(rest["imported"]) == FILES
    assert len(stored(root)) == FILES
