"""The import's write path (`SessionStore.import_records`): the records a reader made are
checked as the loader checks a file, written as the loader reads them back, and nothing of
a file stays alive after it is stored."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.errors import InvalidEvent, StorageError
from forkwise.core.host.importing import ImportReport, store_sessions
from forkwise.core.log.events import MAX_NESTING, Event, check_record
from forkwise.core.store import checked_log
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.checked_log import check_records
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

from .test_importing import TS, lines, session, turn


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": i, **e} for i, e in enumerate(events, 1)]


def test_an_imported_log_reads_back_line_for_line(tmp_path: Path) -> None:
    events = [*turn("t1", "plan it", "ok", 1), *turn("t2", "and then", "done", 2)]
    store = SessionStore(JsonlBackend(tmp_path))
    store_sessions(store, [session("c-one", [dict(e) for e in events])], ImportReport())
    written = (tmp_path / "sessions" / "c-one.jsonl").read_bytes().splitlines()[1:]
    # the bytes an event built by the store would have: seq, type, ts first
    assert written == [Event.from_record(r).encode() for r in numbered(events)]
    summary = store.summary("c-one")
    store.close()
    again = SessionStore(JsonlBackend(tmp_path))  # read back by the loader, every line checked
    assert [e.to_record() for e in again.get("c-one").events] == lines(again, "c-one")[1:]
    assert again.summary("c-one").messages == summary.messages == 4
    assert again.summary("c-one").turns == 2
    again.close()


def test_a_record_nested_deeper_than_a_log_may_be_is_refused(tmp_path: Path) -> None:
    header = SessionHeader("c-deep", TS, "/w")
    ok = numbered([{"type": "plugin/x/deep", "ts": TS, "payload": nested(MAX_NESTING - 5)}])
    assert len(check_records(header, ok).events) == 1
    deep = numbered([{"type": "plugin/x/deep", "ts": TS, "payload": nested(MAX_NESTING + 5)}])
    with pytest.raises(InvalidEvent, match="nests deeper"):
        check_records(header, deep)
    # through the verb: the session fails and nothing is written that the loader would refuse
    store = SessionStore(JsonlBackend(tmp_path))
    bad = [{"type": "plugin/x/deep", "ts": TS, "payload": nested(MAX_NESTING + 5)}]
    with pytest.raises(InvalidEvent):
        store_sessions(store, [session("c-deep", bad)], ImportReport())
    assert not store.exists("c-deep")
    store.close()


def test_a_record_that_breaks_the_brackets_is_refused(tmp_path: Path) -> None:
    events = turn("t1", "plan it", "ok", 1)
    del events[0]  # a message outside any turn
    store = SessionStore(JsonlBackend(tmp_path))
    with pytest.raises(InvalidEvent, match="outside a turn"):
        store_sessions(store, [session("c-bad", events)], ImportReport())
    assert not store.exists("c-bad")
    assert not list((tmp_path / "sessions").glob("*c-bad*"))
    store.close()


def test_a_stored_file_leaves_no_cycle_holding_its_records(tmp_path: Path) -> None:
    """The import pauses the cyclic collector: a cycle would keep every record of every
    file alive to the end of the import (and make the collector walk them all then)."""
    main = [*turn("t1", "plan it", "ok", 1), *turn("t2", "and then", "done", 2)]
    branch = [*turn("t1", "plan it", "ok", 1), *turn("t2", "and then", "other", 3)]
    store = SessionStore(JsonlBackend(tmp_path))
    gc.collect()
    gc.disable()
    try:
        report = ImportReport()
        store_sessions(store, [session("c-b", branch, "c-main"), session("c-main", main)], report)
        assert sorted(report.imported) == ["c-b", "c-main"]
        del main, branch
        assert gc.collect() == 0
    finally:
        gc.enable()
        store.close()


def test_an_import_makes_every_name_it_stored_durable_before_it_reports(tmp_path: Path) -> None:
    """Each imported file is fsynced before it gets its name (whole or absent after a
    crash); the folder is synced once for a batch of names, and always before the verb
    returns (and saves its ledger)."""
    backend = JsonlBackend(tmp_path)
    store = SessionStore(backend)
    events = turn("t1", "plan it", "ok", 1)
    store_sessions(store, [session("c-later", events)], ImportReport(), name_later=True)
    assert backend._unsynced_names == {"c-later"}
    # a temporary file, its write and fsync under way (on the pool's threads): no name
    # until it is durable
    named = tmp_path / "sessions" / "c-later.jsonl"
    assert not named.exists()
    (tmp,) = (tmp_path / "sessions").glob(".c-later.jsonl.*.tmp")
    assert store.exists("c-later")
    assert len(store.get("c-later").events) == len(events)
    store.flush(["c-later"])
    assert backend._unsynced_names == set()
    assert named.read_bytes().count(b"\n") == len(events) + 1  # named whole
    assert not tmp.exists()

    # through the verb, on a Claude Code tree: nothing left to sync when it returns
    from forkwise.core.bench.synth_sources import claude_projects
    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.importing import discover, import_sources

    home = tmp_path / "claude-home"
    claude_projects(home, sessions=3, turns=2, seed=9)
    found = discover("claude", [home], {}, tmp_path)
    report = import_sources(store, found, ImportLedger(tmp_path / "imports.json"))
    assert not report.failed
    assert len(report.imported) >= 3
    assert backend._unsynced_names == set()
    assert all(store.exists(sid) for sid in report.imported)
    # indexed and let go of: nothing of the batch stays loaded, each reads back from its file
    assert not set(report.imported) & set(store._records)
    rows = {row.id: row for row in store.list()}
    for sid in report.imported:
        assert rows[sid].events == len(store.get(sid).events) > 0
    store.close()


def test_a_file_not_named_yet_is_named_before_any_other_change(tmp_path: Path) -> None:
    """A change other than another import's new file (here an append to a session made
    before) sees the files written with `name_later` under their names: each was fsynced,
    then linked; the next flush only syncs the folder."""
    backend = JsonlBackend(tmp_path)
    store = SessionStore(backend)
    other = store.create(cwd="/w")
    events = turn("t1", "plan it", "ok", 1)
    store_sessions(store, [session("c-a", events), session("c-b", events)], ImportReport(),
                   name_later=True)  # fmt: skip
    folder = tmp_path / "sessions"
    assert not (folder / "c-a.jsonl").exists()
    assert not (folder / "c-b.jsonl").exists()
    store.append(other.id, [{"type": "session/title", "title": "meanwhile"}])
    assert (folder / "c-a.jsonl").exists()
    assert (folder / "c-b.jsonl").exists()
    assert not list(folder.glob(".*.tmp"))
    assert backend._unsynced_names == {"c-a", "c-b"}  # named, the folder not synced yet
    store.flush(["c-a", "c-b"])
    assert backend._unsynced_names == set()
    store.close()
    reopened = SessionStore(JsonlBackend(tmp_path))
    assert [e.type for e in reopened.get("c-b").events] == [e["type"] for e in events]
    reopened.close()


def test_a_file_that_cannot_get_its_name_is_not_in_the_store(tmp_path: Path) -> None:
    """A name taken behind the store's back while the file waited for it (a link never
    overwrites): the flush fails, the temporary file goes, and the store does not claim
    the session; the file already there is left as it was."""
    store = SessionStore(JsonlBackend(tmp_path))
    events = turn("t1", "plan it", "ok", 1)
    store_sessions(store, [session("c-taken", events)], ImportReport(), name_later=True)
    squatter = tmp_path / "sessions" / "c-taken.jsonl"
    squatter.write_bytes(b"not ours\n")
    with pytest.raises(StorageError):
        store.flush(["c-taken"])
    assert squatter.read_bytes() == b"not ours\n"
    assert not list((tmp_path / "sessions").glob(".*.tmp"))
    assert "c-taken" not in store._records
    store.close()


def test_an_import_reports_a_session_that_never_got_its_name_as_failed(tmp_path: Path) -> None:
    """Through the verb: the name of one imported session is taken while its file waits
    for the batch's flush. That session is reported failed (its source file named), the
    others imported and on disk; importing again reads that file again."""
    from forkwise.core.bench.synth_sources import claude_projects
    from forkwise.core.formats.base import source_session_id
    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.importing import discover, import_sources

    home = tmp_path / "claude-home"
    claude_projects(home, sessions=3, turns=2, seed=9)
    found = discover("claude", [home], {}, tmp_path)
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    folder = tmp_path / "store" / "sessions"
    taken: list[str] = []

    def squat(done: int, total: int, path: str) -> None:
        if done == 2:  # the second file is stored, not named yet: take its name
            name = source_session_id("claude", Path(path).stem)
            assert list(folder.glob(f".{name}.jsonl.*.tmp"))
            taken.append(name)
            (folder / f"{name}.jsonl").write_bytes(b"not ours\n")

    report = import_sources(store, found, ImportLedger(tmp_path / "imports.json"), squat)
    (lost,) = taken
    assert lost not in report.imported
    assert [f["path"] for f in report.failed] == [str(found[1][0])], report.failed
    assert len(report.imported) == len(found) - 1
    for sid in report.imported:
        assert (folder / f"{sid}.jsonl").read_bytes().startswith(b'{"type":"session"')
    assert (folder / f"{lost}.jsonl").read_bytes() == b"not ours\n"
    assert not list(folder.glob(".*.tmp"))
    (folder / f"{lost}.jsonl").unlink()
    again = import_sources(store, found, ImportLedger(tmp_path / "imports.json"))
    assert again.imported == [lost]
    assert again.failed == []
    store.close()


@pytest.mark.parametrize("counted", [False, True])
@pytest.mark.parametrize("extra", [-1, 0, 1, 2])
def test_an_import_refuses_exactly_the_nesting_the_loader_refuses(
    extra: int, counted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the limit and one past it, for objects and arrays alike: what check_records
    lets through is what the loader's check of the written line lets through, by the
    encoder's limit or (`counted`: an encoder without one) by the line's brackets."""
    if counted:
        monkeypatch.setattr(checked_log, "_WRAP", 0)
    header = SessionHeader("c-edge", TS, "/w")
    for leaf in ("leaf", {}, []):
        payload: Any = leaf
        for level in range(MAX_NESTING - 1 + extra - (leaf != "leaf")):
            payload = [payload] if level % 2 else {"k": payload}
        record = {"seq": 1, "type": "plugin/x/deep", "ts": TS, "payload": payload}
        raw = orjson.dumps(record)
        try:
            check_record(orjson.loads(raw), raw)
            loader_ok = True
        except InvalidEvent:
            loader_ok = False
        assert loader_ok == (extra <= 0)
        if loader_ok:
            assert check_records(header, [record]).events.lines(1) == [raw]
        else:
            with pytest.raises(InvalidEvent, match="nests deeper"):
                check_records(header, [record])


def test_an_event_json_cannot_hold_is_refused_as_such() -> None:
    header = SessionHeader("c-odd", TS, "/w")
    record = {"seq": 1, "type": "plugin/x/odd", "ts": TS, "payload": {1.5j}}
    with pytest.raises(InvalidEvent, match="cannot be stored as JSON"):
        check_records(header, [record])
