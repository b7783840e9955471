"""A session list says which sessions wait for the person: the summary's `approvals` (the
open turn's approval requests with no answer yet) follow `OpenTurn.pending`'s rule on every
log and every prefix of it, survive the index, and an index of the version before them is
still read (brought up to date in place, or the log read again when that is not exact)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from logdata import TS, events_of
from strategies import examples, logs

from forkwise.core.demo import build_demo_store
from forkwise.core.log.events import Event
from forkwise.core.runtime.listing import summary_row
from forkwise.core.runtime.turn_state import OpenTurn
from forkwise.core.store.backends.index_entries import index_entry, summary_for
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import INDEX_ROW_KEYS, Session, SessionHeader, SessionSummary
from forkwise.core.store.session_store import SessionStore

Draft = dict[str, Any]
HEADER = SessionHeader("s", TS, "/w")
#: the stat an index entry is made with (its size and mtime only)
STAT = os.stat_result((0o100600, 0, 0, 1, 0, 0, 10, 0, 0, 0))


def pending_of(events: list[Event]) -> list[tuple[str, str]]:
    """What the open session says: OpenTurn.pending (approval id, tool), in its order."""
    turn = OpenTurn.of(Session(HEADER, events, "g"))
    return [] if turn is None else [(a, r.tool) for a, r in turn.pending.items()]


def assert_agree_on_every_prefix(events: list[Event]) -> SessionSummary:
    """The summary's rule and OpenTurn's agree after each event, folded at once and folded
    on from a summary that went through an index entry (as an append after a restart)."""
    summary = SessionSummary.start(HEADER)
    for k in range(len(events) + 1):
        whole = SessionSummary.start(HEADER).fold(events[:k])
        expected = pending_of(events[:k])
        assert list(whole.approvals or ()) == expected, k
        assert whole.waiting is bool(expected)
        if k:
            kept = summary_for(index_entry(STAT, summary), "s")
            assert kept is not None
            summary = kept.fold(events[k - 1 : k])
            assert summary == whole, k
    return summary


def turn_start(tid: str) -> list[Draft]:
    return [{"type": "turn/start", "turn": tid}, {"type": "step/start", "turn": tid, "step": "s"}]


def request(tid: str, approval: str, tool: str) -> Draft:
    return {"type": "approval/request", "turn": tid, "approval": approval,
            "call": f"call-{approval}", "tool": tool}  # fmt: skip


def resolve(tid: str, approval: str, decision: str = "approved") -> Draft:
    return {"type": "approval/resolve", "turn": tid, "approval": approval, "decision": decision}


def turn_end(tid: str, status: str = "completed") -> Draft:
    return {"type": "turn/end", "turn": tid, "status": status}


CASES: dict[str, tuple[list[Draft], list[tuple[str, str]]]] = {
    "several requests, one answered": (
        [*turn_start("t1"), request("t1", "a", "shell"), request("t1", "b", "read_file"),
         request("t1", "c", "write_file"), resolve("t1", "b")],
        [("a", "shell"), ("c", "write_file")],
    ),
    "all answered, the turn still open": (
        [*turn_start("t1"), request("t1", "a", "shell"), resolve("t1", "a", "denied"),
         request("t1", "b", "read_file"), resolve("t1", "b")],
        [],
    ),
    "an answer to no request, then asked again under the same id": (
        [*turn_start("t1"), resolve("t1", "zz"), request("t1", "a", "shell"),
         request("t1", "b", "list_dir"), request("t1", "a", "read_file")],
        [("a", "read_file"), ("b", "list_dir")],
    ),
    "unanswered when the turn ended, then a new turn": (
        [*turn_start("t1"), request("t1", "a", "shell"), turn_end("t1", "cancelled"),
         *turn_start("t2")],
        [],
    ),
    "across turn ends: only the open turn's": (
        [*turn_start("t1"), request("t1", "a", "shell"), resolve("t1", "a"), turn_end("t1"),
         {"type": "session/title", "title": "x"}, *turn_start("t2"),
         request("t2", "a", "list_dir")],
        [("a", "list_dir")],
    ),
    "a crash-interrupted turn that waited": (
        [*turn_start("t1"), request("t1", "a", "shell"), turn_end("t1", "interrupted"),
         {"type": "model/select", "provider": "offline", "model": "m"}],
        [],
    ),
    "a turn a crash left open, no request": (
        [*turn_start("t1"), request("t1", "a", "shell"), resolve("t1", "a"),
         turn_end("t1"), *turn_start("t2")],
        [],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_summary_waits_exactly_when_the_open_turn_does(case: str) -> None:
    drafts, expected = CASES[case]
    summary = assert_agree_on_every_prefix(events_of(drafts))
    assert list(summary.approvals or ()) == expected  # the rule as it is meant, not only
    assert summary.to_dict()["waiting"] is bool(expected)  # agreement of two
    assert summary.to_dict()["waitingTools"] == [tool for _, tool in expected]


@examples(120, 2000)
@given(logs())
def test_on_random_logs_the_summary_and_open_turn_agree(drafts: list[Draft]) -> None:
    assert_agree_on_every_prefix(events_of(drafts))


def test_the_demo_store_lists_its_waiting_session_as_waiting(tmp_path: Path) -> None:
    build_demo_store(tmp_path)
    for _ in range(2):  # the logs read, then the index the first listing wrote
        store = SessionStore(JsonlBackend(tmp_path))
        try:
            rows = {s.id: s for s in store.list()}
            for sid, row in rows.items():
                snap = store.get(sid)
                turn = OpenTurn.of(snap)
                pending = [] if turn is None else [(a, r.tool) for a, r in turn.pending.items()]
                assert list(row.approvals or ()) == pending, sid
                assert_agree_on_every_prefix(list(snap.events))
        finally:
            store.close()
        waiting = [row for row in rows.values() if row.waiting]
        assert [(r.display_title, r.running) for r in waiting] == [
            ("Clean up the build folder", True)
        ]
        listed = summary_row(waiting[0])
        assert (listed["running"], listed["waiting"], listed["waitingTools"]) == (
            True, True, ["read_file"],
        )  # fmt: skip


def index_rows(store_dir: Path) -> dict[str, list[Any]]:
    index = orjson.loads((store_dir / "index.json").read_bytes())
    return {sid: entry["summary"] for sid, entry in index["sessions"].items()}


def waiting_store(store_dir: Path) -> None:
    """'idle' (no open turn), 'asks' (waits on two requests, one answered since)."""
    waiting_store_on(SessionStore(JsonlBackend(store_dir)))


def waiting_store_on(store: SessionStore) -> None:
    """`waiting_store`'s sessions in `store`, which is closed afterwards."""
    try:
        store.create("idle", cwd="/w")
        store.append("idle", [*turn_start("t1"), request("t1", "a", "shell"),
                              resolve("t1", "a"), turn_end("t1")])  # fmt: skip
        store.create("asks", cwd="/w")
        store.append("asks", [*turn_start("t1"), request("t1", "a", "shell"),
                              request("t1", "b", "read_file")])  # fmt: skip
        store.list()  # writes the index
    finally:
        store.close()


def test_an_append_to_a_session_known_from_the_index_keeps_its_other_requests(
    tmp_path: Path,
) -> None:
    waiting_store(tmp_path)
    assert index_rows(tmp_path)["asks"][-1] == {"a": "shell", "b": "read_file"}
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        store.append("asks", [resolve("t1", "a")])
        assert store.summary("asks").approvals == (("b", "read_file"),)
        store.append("asks", [resolve("t1", "b"), turn_end("t1")])
        assert store.summary("asks").approvals is None
    finally:
        store.close()
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        assert {s.id: s.waiting for s in store.list()} == {"idle": False, "asks": False}
    finally:
        store.close()


def older_index(store_dir: Path) -> None:
    """Make the index as the version before `approvals` wrote it: each row one value
    short, and a title changed in it, so a listing tells a row it took from one it read
    again from the log."""
    path = store_dir / "index.json"
    index = orjson.loads(path.read_bytes())
    title = INDEX_ROW_KEYS.index("title")
    for entry in index["sessions"].values():
        entry["summary"] = entry["summary"][:-1]
        entry["summary"][title] = "from the older index"
    st = path.stat()
    path.write_bytes(orjson.dumps(index))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_older_index_is_read_and_brought_up_to_date(tmp_path: Path) -> None:
    waiting_store(tmp_path)
    older_index(tmp_path)
    (tmp_path / "index-head.json").unlink(missing_ok=True)
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        rows = {s.id: s for s in store.list()}
    finally:
        store.close()
    # no open turn: exact without approvals, taken from the index (its title)
    assert (rows["idle"].title, rows["idle"].waiting) == ("from the older index", False)
    # an open turn: the older index cannot say whether it waits: its log is read again
    assert (rows["asks"].title, rows["asks"].approvals) == (None, (("a", "shell"),
                                                                   ("b", "read_file")))
    saved = index_rows(tmp_path)
    assert [len(row) for row in saved.values()] == [len(INDEX_ROW_KEYS)] * 2
    assert saved["asks"][-1] == {"a": "shell", "b": "read_file"}
    assert saved["idle"][INDEX_ROW_KEYS.index("title")] == "from the older index"


def test_an_older_index_still_gives_lineage_and_log_facts(tmp_path: Path) -> None:
    waiting_store(tmp_path)
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        store.fork("idle", child_id="child")
        store.list()
    finally:
        store.close()
    older_index(tmp_path)
    backend = JsonlBackend(tmp_path, writable=False)
    catalogue = backend.catalogue
    tops, beneath = catalogue.lineage()
    assert beneath == {"idle": ["child"]}
    assert set(tops) == {"idle", "asks"}
    st = (tmp_path / "sessions" / "idle.jsonl").stat()
    checked = catalogue.checked("idle", st)
    assert checked is not None
    assert checked[0].title == "from the older index"
    running = catalogue.checked("asks", (tmp_path / "sessions" / "asks.jsonl").stat())
    assert running is None  # not exact: the loader reads that log


@pytest.mark.parametrize("approvals", [[], "a", {"a": 1}, {"a": None}, 3])
def test_approvals_of_the_wrong_shape_are_refused(approvals: object) -> None:
    row = SessionSummary(id="s", created=TS, cwd="/w").to_index_row()
    row[-1] = approvals
    with pytest.raises(TypeError):
        SessionSummary.from_index_row(row)
    with pytest.raises(TypeError):
        SessionSummary.from_index(dict(zip(INDEX_ROW_KEYS, row, strict=True)))


def test_an_older_object_entry_is_exact_only_without_an_open_turn() -> None:
    idle = SessionSummary(id="s", created=TS, cwd="/w").to_index()
    del idle["approvals"]
    assert SessionSummary.from_older_index(idle).approvals is None
    with pytest.raises(TypeError):
        SessionSummary.from_older_index({**idle, "running": True})
    waiting = {**idle, "running": True, "approvals": {"a": "shell"}}
    assert SessionSummary.from_older_index(waiting).approvals == (("a", "shell"),)


def test_an_older_index_with_no_open_turn_is_saved_brought_up_to_date(tmp_path: Path) -> None:
    """No log is read again (every row is exact), and yet the index is saved in the new
    form: the rows need not be brought up to date again at every listing."""
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        store.create("idle", cwd="/w")
        store.append("idle", [*turn_start("t1"), turn_end("t1")])
        store.list()
    finally:
        store.close()
    older_index(tmp_path)
    store = SessionStore(JsonlBackend(tmp_path))
    try:
        assert [(s.title, s.waiting) for s in store.list()] == [("from the older index", False)]
    finally:
        store.close()
    assert [len(row) for row in index_rows(tmp_path).values()] == [len(INDEX_ROW_KEYS)]


def older_rows(url: str) -> None:
    """Make a shared store's rows as the version before `approvals` wrote them: no such
    key, no form marker, and a title changed, so a listing tells a row it took from one
    folded again from the events."""
    import psycopg
    from psycopg.types.json import Json

    with psycopg.connect(url) as conn:
        for sid, data in conn.execute("SELECT id, summary FROM forkwise_sessions").fetchall():
            del data["approvals"]
            data["title"] = "from the older rows"
            conn.execute(
                "UPDATE forkwise_sessions SET summary = %s WHERE id = %s", (Json(data), sid)
            )
        conn.execute("DELETE FROM forkwise_meta")


def test_older_summary_rows_of_a_shared_store_are_brought_up_to_date(pg_url: str) -> None:
    from forkwise.core.store.backends.postgres import PostgresBackend

    waiting_store_on(SessionStore(PostgresBackend(pg_url)))
    older_rows(pg_url)
    reader = SessionStore(PostgresBackend(pg_url, writable=False))
    try:  # a read-only host changes nothing: an older row waits for nothing there
        assert {s.id: s.approvals for s in reader.list()} == {"idle": None, "asks": None}
    finally:
        reader.close()
    store = SessionStore(PostgresBackend(pg_url))
    try:
        rows = {s.id: s for s in store.list()}
        # no open turn: exact without approvals, kept as it was (its title)
        assert (rows["idle"].title, rows["idle"].waiting) == ("from the older rows", False)
        # an open turn: folded again from its events, which say what it waits for
        assert (rows["asks"].title, rows["asks"].approvals) == (
            None, (("a", "shell"), ("b", "read_file")),
        )  # fmt: skip
        store.append("asks", [resolve("t1", "a")])
        assert store.summary("asks").approvals == (("b", "read_file"),)
    finally:
        store.close()
    older_rows(pg_url)  # once more, after an answer: the events say what still waits
    again = SessionStore(PostgresBackend(pg_url))
    try:
        assert {s.id: s.approvals for s in again.list()} == {
            "idle": None, "asks": (("b", "read_file"),),
        }  # fmt: skip
    finally:
        again.close()
