"""An imported file that cannot get its name, found by a change other than the import's
own flush (`SessionStore._persist`): whichever change finds it, the session leaves the
store's memory at once, nothing of it stays on disk, the change itself is made, and the
import reports the session failed at its flush. The name is really taken on disk (a
directory in its place), nothing is mocked."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from forkwise.core.errors import SourceNotFound, StorageError
from forkwise.core.host.importing import ImportReport, store_sessions
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

from .test_importing import session, turn

TITLE = {"type": "session/title", "title": "meanwhile"}


def _append(store: SessionStore, other: str) -> str:
    store.append(other, [TITLE])
    return other


def _create(store: SessionStore, other: str) -> str:
    return store.create(cwd="/w", follow=[TITLE]).id


def _fork(store: SessionStore, other: str) -> str:
    return store.fork(other).id


def _fork_indexed(store: SessionStore, other: str) -> str:
    store.release([other])  # indexed and not loaded: the fork comes from the index
    child = store.fork_indexed(other)
    assert child is not None
    return child.id


def _truncate(store: SessionStore, other: str) -> str:
    store.truncate(other, 4)
    return other


def _delete(store: SessionStore, other: str) -> str:
    store.delete(other)
    return other


def _load(store: SessionStore, other: str) -> str:
    # a file still waiting for its name, read from disk: the files are named first
    store.release(["c-ok"])
    assert len(store.get("c-ok").events) == 4
    return "c-ok"


def _import_more(store: SessionStore, other: str) -> str:
    # a full batch of files waiting for their names: the next one names them first
    events = turn("t1", "more", "ok", 1)
    many = [session(f"c-more{i}", events) for i in range(64)]
    store_sessions(store, many, ImportReport(), name_later=True)
    return "c-more0"


CHANGES: dict[str, Callable[[SessionStore, str], str]] = {
    "append": _append,
    "create": _create,
    "fork": _fork,
    "fork_indexed": _fork_indexed,
    "truncate": _truncate,
    "delete": _delete,
    "load": _load,
    "import": _import_more,
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_name_lost_at_any_change_leaves_the_store_and_is_reported_at_its_flush(
    tmp_path: Path, change: str
) -> None:
    store = SessionStore(JsonlBackend(tmp_path))
    folder = tmp_path / "sessions"
    before = [*turn("t0", "before", "ok", 1), *turn("t00", "again", "ok", 2)]
    other = store.create(cwd="/w", follow=before).id
    events = turn("t1", "plan it", "ok", 1)
    store_sessions(store, [session("c-ok", events), session("c-taken", events)],
                   ImportReport(), name_later=True)  # fmt: skip
    assert store.exists("c-taken")
    (folder / "c-taken.jsonl").mkdir()  # its name taken while its file waits for it

    touched = CHANGES[change](store, other)  # the change is made all the same
    assert "c-taken" not in store._records
    if change != "delete":
        assert store.exists(touched)
    (folder / "c-taken.jsonl").rmdir()
    assert not store.exists("c-taken")
    with pytest.raises(SourceNotFound):
        store.get("c-taken")
    assert not list(folder.glob(".c-taken.*"))
    assert (folder / "c-ok.jsonl").exists()

    with pytest.raises(StorageError) as raised:
        store.flush(["c-ok", "c-taken"])
    assert raised.value.details["lost"] == ["c-taken"]
    store.flush(["c-ok"])  # reported once: the rest of the batch flushes
    assert not (folder / "c-taken.jsonl").exists()
    store.close()

    reopened = SessionStore(JsonlBackend(tmp_path))
    assert reopened.exists("c-ok")
    assert not reopened.exists("c-taken")
    if change == "append":
        assert reopened.get(other).events[-1].type == "session/title"
    elif change == "delete":
        assert not reopened.exists(other)
    elif change == "truncate":
        assert len(reopened.get(other).events) == 4
    else:
        assert reopened.exists(touched)
    reopened.close()


def test_the_same_session_imported_again_is_not_reported_lost(tmp_path: Path) -> None:
    """A lost session stored again under the same id (the next import of its file) is
    flushed as any other: what was lost is forgotten once it is made again."""
    store = SessionStore(JsonlBackend(tmp_path))
    folder = tmp_path / "sessions"
    other = store.create(cwd="/w").id
    events = turn("t1", "plan it", "ok", 1)
    store_sessions(store, [session("c-taken", events)], ImportReport(), name_later=True)
    (folder / "c-taken.jsonl").mkdir()
    store.append(other, [TITLE])
    (folder / "c-taken.jsonl").rmdir()
    store_sessions(store, [session("c-taken", events)], ImportReport(), name_later=True)
    store.flush(["c-taken"])
    assert (folder / "c-taken.jsonl").exists()
    assert store.exists("c-taken")
    store.close()


def test_an_import_reports_a_session_lost_at_an_unrelated_append(tmp_path: Path) -> None:
    """Through the verb: while an import runs, a session's name is taken and an append to
    another session names the files waiting for theirs. The append is made; the session
    whose name was taken is reported failed with its source file, the others imported;
    importing again once the name is free imports it."""
    from forkwise.core.bench.synth_sources import claude_projects
    from forkwise.core.formats.base import source_session_id
    from forkwise.core.host.importing import ImportLedger, discover, import_sources

    home = tmp_path / "claude-home"
    claude_projects(home, sessions=3, turns=2, seed=9)
    found = discover("claude", [home], {}, tmp_path)
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    folder = tmp_path / "store" / "sessions"
    other = store.create(cwd="/w").id
    taken: list[str] = []

    def meanwhile(done: int, total: int, path: str) -> None:
        if done == 2:  # the second file is stored, not named yet
            name = source_session_id("claude", Path(path).stem)
            taken.append(name)
            (folder / f"{name}.jsonl").mkdir()
            store.append(other, [TITLE])
            assert name not in store._records
            shutil.rmtree(folder / f"{name}.jsonl")

    ledger = tmp_path / "imports.json"
    report = import_sources(store, found, ImportLedger(ledger), meanwhile)
    (lost,) = taken
    assert lost not in report.imported
    assert [f["path"] for f in report.failed] == [str(found[1][0])], report.failed
    assert len(report.imported) == len(found) - 1
    assert all((folder / f"{sid}.jsonl").exists() for sid in report.imported)
    assert not (folder / f"{lost}.jsonl").exists()
    assert not list(folder.glob(".*.tmp"))
    assert store.get(other).events[-1].type == "session/title"
    again = import_sources(store, found, ImportLedger(ledger))
    assert again.imported == [lost]
    assert again.failed == []
    store.close()


def test_an_imported_file_whose_write_fails_is_reported_failed_and_left_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk full while the second file's session is written (the write runs beside its
    fsync, on another thread): that file is reported failed at the import's flush, nothing
    of it is on disk, the others are imported; importing again imports it."""
    import errno
    import os

    from forkwise.core.bench.synth_sources import claude_projects
    from forkwise.core.host.importing import ImportLedger, discover, import_sources

    home = tmp_path / "claude-home"
    claude_projects(home, sessions=3, turns=2, seed=9)
    found = discover("claude", [home], {}, tmp_path)
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    folder = tmp_path / "store" / "sessions"
    real_write = os.write
    full = found[1][0].stem  # the session of the second file, by its name in the store

    def write(fd: int, data: bytes) -> int:
        if f"{full}.jsonl." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    ledger = tmp_path / "imports.json"
    report = import_sources(store, found, ImportLedger(ledger))
    monkeypatch.setattr(os, "write", real_write)
    assert [f["path"] for f in report.failed] == [str(found[1][0])], report.failed
    assert report.failed[0]["error"]["code"] == "storage-error"
    assert len(report.imported) == len(found) - 1
    assert all((folder / f"{sid}.jsonl").exists() for sid in report.imported)
    assert not [p for p in folder.iterdir() if full in p.name]
    again = import_sources(store, found, ImportLedger(ledger))
    assert len(again.imported) == 1
    assert full in again.imported[0]
    assert again.failed == []
    store.close()
