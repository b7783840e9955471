"""The import verb's rules on a real JSONL store: lineage from a reader's
`parent`, idempotent and incremental re-import. The sessions are what a format's reader
returns (`ImportedSession`); the formats' own tests feed real files through readers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.formats.base import ImportedSession, SourceRef
from forkwise.core.host.importing import ImportReport, store_sessions
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

TS = "2026-03-01T10:00:00.000Z"


def turn(tid: str, question: str, answer: str, line: int) -> list[dict[str, Any]]:
    src = {"id": "s1", "lines": [line]}
    return [
        {"type": "turn/start", "ts": TS, "turn": tid, "src": src},
        {"type": "message", "ts": TS, "turn": tid, "id": f"user:{tid}:q", "role": "user",
         "parts": [{"type": "text", "text": question}], "src": src},
        {"type": "message", "ts": TS, "turn": tid, "id": f"assistant:{tid}:a",
         "role": "assistant", "parts": [{"type": "text", "text": answer}], "src": src},
        {"type": "turn/end", "ts": TS, "turn": tid, "status": "completed", "src": src},
    ]


def session(sid: str, events: list[dict[str, Any]], parent: str | None = None) -> ImportedSession:
    return ImportedSession(
        id=sid, created=TS, cwd="/w", source=SourceRef("claude", "/x/s1.jsonl", "s1"),
        events=events, parent=parent, relation="fork" if parent else None,
    )


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(JsonlBackend(tmp_path))
    yield s
    s.close()


def lines(store: SessionStore, sid: str) -> list[dict[str, Any]]:
    """The header line of a session's file, then its events as the store reads them (a
    branch's file holds its seed by reference to its parent's lines)."""
    path = store.backend.root / "sessions" / f"{sid}.jsonl"  # type: ignore[attr-defined]
    header = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
    return [header, *(orjson.loads(e.encode()) for e in store.get(sid).events)]


def own_lines(store: SessionStore, sid: str) -> list[dict[str, Any]]:
    path = store.backend.root / "sessions" / f"{sid}.jsonl"  # type: ignore[attr-defined]
    return [orjson.loads(x) for x in path.read_bytes().splitlines()[1:]]


def test_a_branch_becomes_a_fork_at_the_last_turn_end_it_shares(store: SessionStore) -> None:
    main = [*turn("t1", "plan it", "ok", 1), *turn("t2", "and then", "done", 2)]
    # a rewind of t2's question: the branch shares t1 and the start of t2
    branch = [*turn("t1", "plan it", "ok", 1), *turn("t2", "and then", "other", 3)]
    branch[4] = main[4]  # same turn/start line
    report = ImportReport()
    # the child comes first: parents are stored first whatever the order
    store_sessions(store, [session("c-b", branch, "c-main"), session("c-main", main)], report)
    assert sorted(report.imported) == ["c-b", "c-main"]
    child = lines(store, "c-b")
    # the shared prefix is stored once: the branch's file names where it is
    assert (child[0]["seedIn"]["session"], child[0]["seedIn"]["events"]) == ("c-main", 4)
    assert own_lines(store, "c-b")[0]["seq"] == 5
    assert (child[0]["parentSession"], child[0]["seedLength"]) == ("c-main", 4)
    assert child[0]["meta"]["source"]["tool"] == "claude"
    assert child[5]["type"] == "history/fork"
    assert (child[5]["source"], child[5]["boundary"]) == ("c-main", 4)
    # the shared prefix is the parent's own lines, then the branch's own turn
    assert child[1:5] == lines(store, "c-main")[1:5]
    assert [e["type"] for e in child[6:]] == ["turn/start", "message", "message", "turn/end"]
    assert child[8]["parts"][0]["text"] == "other"
    assert [e["seq"] for e in child[1:]] == list(range(1, 10))


def test_a_fork_of_a_fork_counts_its_parents_history_fork(store: SessionStore) -> None:
    t1, t2, t3 = turn("t1", "a", "b", 1), turn("t2", "c", "d", 2), turn("t3", "e", "f", 3)
    main = [*t1]
    first = [*t1, *t2]  # forked from main after t1
    second = [*t1, *t2, *t3]  # forked from `first` after t2
    store_sessions(
        store,
        [session("m", main), session("f1", first, "m"), session("f2", second, "f1")],
        ImportReport(),
    )
    f2 = lines(store, "f2")
    assert f2[0]["seedIn"]["session"] == "f1"  # which holds its own seed by reference to m
    # f1 stores t1, its history/fork, t2: the shared part of f2 holds all of it
    assert (f2[0]["parentSession"], f2[0]["seedLength"]) == ("f1", 9)
    assert f2[1:10] == lines(store, "f1")[1:10]
    assert f2[10]["type"] == "history/fork"


def test_a_second_import_touches_nothing_and_a_grown_source_appends(
    store: SessionStore,
) -> None:
    main = [*turn("t1", "a", "b", 1)]
    store_sessions(store, [session("m", main)], ImportReport())
    path = store.backend.root / "sessions" / "m.jsonl"  # type: ignore[attr-defined]
    before, stat = path.read_bytes(), path.stat()
    report = ImportReport()
    store_sessions(store, [session("m", main)], report)
    assert report.unchanged == ["m"]
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    grown = [*main, *turn("t2", "c", "d", 2)]
    report = ImportReport()
    store_sessions(store, [session("m", grown)], report)
    assert report.updated == ["m"]
    after = path.read_bytes()
    assert after.startswith(before)  # appended, header and old lines untouched
    assert len(after.splitlines()) == 1 + 8


def test_a_source_rewritten_after_a_turn_is_cut_back_and_continued(
    store: SessionStore,
) -> None:
    first = [*turn("t1", "a", "b", 1), *turn("t2", "c", "d", 2)]
    store_sessions(store, [session("m", first)], ImportReport())
    rewritten = [*turn("t1", "a", "b", 1), *turn("t2", "c", "changed", 2)]
    report = ImportReport()
    store_sessions(store, [session("m", rewritten)], report)
    assert report.updated == ["m"]
    stored = lines(store, "m")
    assert len(stored) == 9
    assert stored[7]["parts"][0]["text"] == "changed"


def seq_first(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as a `seq_first` reader makes them: a placeholder `seq`, `type`, `ts`."""
    return [{"seq": 0, "type": r["type"], "ts": r["ts"], **r} for r in records]


def _files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "sessions").glob("*.jsonl"))}


def test_seq_first_records_are_numbered_in_place_and_stored_byte_for_byte(
    tmp_path: Path,
) -> None:
    t1, t2, t3 = turn("t1", "a", "b", 1), turn("t2", "c", "d", 2), turn("t3", "e", "f", 3)
    main = [*t1, *t2]
    rewind = [*t1, *turn("t2", "c", "other", 4)]  # a branch of main after t1
    deeper = [*t1, *turn("t2", "c", "other", 4), *t3]  # a branch of the branch after t2

    def sessions(convert: bool) -> list[ImportedSession]:
        out = []
        for sid, events, parent in (
            ("d", deeper, "r"), ("r", rewind, "m"), ("m", main, None)  # children first
        ):
            s = session(sid, seq_first(events) if convert else events, parent)
            s.seq_first = convert
            out.append(s)
        # a branch made from the same record objects as its parent (as Codex's rolled
        # back turns are): numbering the parent's records must not change the branch's
        shared = session("m-rb", [*out[2].events[:4], *(seq_first(t3) if convert else t3)], "m")
        shared.seq_first = convert
        return [*out, shared]

    stored = {}
    for convert in (False, True):
        folder = tmp_path / str(convert)
        store = SessionStore(JsonlBackend(folder))
        read = sessions(convert)
        report = ImportReport()
        store_sessions(store, read, report)
        store.close()
        assert sorted(report.imported) == ["d", "m", "m-rb", "r"]
        stored[convert] = _files(folder)
        if convert:  # the reader's own records carry their seq now: no copy was made
            m = next(s for s in read if s.id == "m")
            assert [r["seq"] for r in m.events] == list(range(1, 9))
            assert orjson.dumps(m.events[0]) == stored[True]["m.jsonl"].split(b"\n")[1]
    assert stored[True] == stored[False]
    child = [orjson.loads(x) for x in stored[True]["d.jsonl"].splitlines()]
    assert (child[0]["parentSession"], child[0]["seedLength"]) == ("r", 9)
    rb = [orjson.loads(x) for x in stored[True]["m-rb.jsonl"].splitlines()]
    assert (rb[0]["parentSession"], rb[0]["seedLength"]) == ("m", 4)
