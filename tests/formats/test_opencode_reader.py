"""Reading OpenCode's database: content, turns, a fork recognised by content, subtask
sessions, a revert; the database read while OpenCode writes it (WAL, never blocking it);
through the import verb: lineage stored once, re-import unchanged, grown sessions appended."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from opencode_fixtures import CWD, MODEL, PROVIDER, OpenCodeDb, settled

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import FormatError, ImportedSession, source_session_id
from forkwise.core.formats.opencode import READER
from forkwise.core.host.importing import detect


def oc(sid: str, branch: str | None = None) -> str:
    return source_session_id("opencode", sid, branch)


def read(path: Path) -> dict[str, ImportedSession]:
    return {s.id: s for s in READER.read(settled(path))}


def messages(session: ImportedSession) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]


def of_type(session: ImportedSession, etype: str) -> list[dict[str, Any]]:
    return [e for e in session.events if e["type"] == etype]


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def rows(store: Path) -> dict[str, Any]:
    code, listed = run_json("sessions", "list", "--store", str(store))
    assert code == 0
    return {r["id"]: r for r in listed}


def stored_lines(store: Path, sid: str) -> list[bytes]:
    return (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()


@pytest.fixture
def db(tmp_path: Path) -> OpenCodeDb:
    made = OpenCodeDb(tmp_path / "data" / "opencode" / "opencode.db")
    yield made  # type: ignore[misc]
    made.close()


def test_a_session_maps_prompts_answers_tools_and_usage(db: OpenCodeDb) -> None:
    sid = db.session("Fix the parser")
    asked = db.user(sid, "Why does the parser fail?")
    db.assistant(
        sid,
        asked,
        reasoning="Let me look at the file",
        tools=[
            {"tool": "read", "call": "call_1", "input": {"filePath": "parser.py"},
             "output": "def parse(): ...", "title": "parser.py"},
            {"tool": "bash", "call": "call_2", "input": {"command": "pytest"},
             "status": "error", "output": "exit 1"},
        ],
        finish="tool-calls",
    )
    db.assistant(sid, asked, "The parser has no body.")
    db.exchange(sid, "Thanks", "You're welcome.")
    session = read(db.path)[oc(sid)]
    assert (session.parent, session.relation) == (None, None)
    assert session.title == "Fix the parser"
    assert session.cwd == CWD
    assert (session.source.tool, session.source.id, session.source.version) == (
        "opencode",
        sid,
        "1.18.33",
    )
    assert session.source.path == str(db.path)
    assert messages(session) == [
        ("user", "Why does the parser fail?"),
        ("assistant", ""),
        ("assistant", "The parser has no body."),
        ("user", "Thanks"),
        ("assistant", "You're welcome."),
    ]
    first = of_type(session, "message")[1]
    assert first["parts"] == [
        {"type": "reasoning", "text": "Let me look at the file"},
        {"type": "tool_call", "id": "call_1", "name": "read", "args": {"filePath": "parser.py"}},
        {"type": "tool_call", "id": "call_2", "name": "bash", "args": {"command": "pytest"}},
    ]
    results = of_type(session, "tool/result")
    assert [(r["call"], r["output"], r.get("error")) for r in results] == [
        ("call_1", "def parse(): ...", None),
        ("call_2", "exit 1", True),
    ]
    assert [(e["provider"], e["model"]) for e in of_type(session, "model/select")] == [
        (PROVIDER, MODEL)
    ]
    usage = of_type(session, "plugin/opencode/usage")
    assert [u["cost"] for u in usage] == [0.0012] * 3
    assert usage[0]["tokens"]["input"] == 100
    assert session.unmapped["usage"] == 3
    assert session.unmapped["step-start"] == 3
    assert [e["status"] for e in of_type(session, "turn/end")] == ["completed", "completed"]
    for event in session.events:
        if event["type"] != "turn/end":
            assert event["src"]["id"] == sid


def test_aborted_failed_and_unfinished_turns(db: OpenCodeDb) -> None:
    sid = db.session("Turns")
    a = db.user(sid, "Stop this")
    db.assistant(sid, a, "Partial", error={"name": "MessageAbortedError", "data": {}})
    b = db.user(sid, "Break this")
    db.assistant(sid, b, error={"name": "APIError", "data": {"message": "503"}})
    c = db.user(sid, "Never answered")
    db.assistant(sid, c, completed=False)
    session = read(db.path)[oc(sid)]
    assert [e["status"] for e in of_type(session, "turn/end")] == [
        "cancelled",
        "failed",
        "interrupted",
    ]
    assert len(of_type(session, "plugin/opencode/error")) == 2


def test_a_fork_is_recognised_by_its_copied_messages(db: OpenCodeDb) -> None:
    sid = db.session("Haiku work")
    db.exchange(sid, "Write about the sea", "Waves fold into foam.")
    second, _ = db.exchange(sid, "Now the mountains", "Stone holds up the sky.")
    forked = db.fork(sid, before=second)  # OpenCode: new ids, same content and times
    db.exchange(forked, "Now the forest", "Green light, slow and deep.")
    unrelated = db.session("Other work")
    db.exchange(unrelated, "Write about the sea", "A different answer.")
    found = read(db.path)
    child = found[oc(forked)]
    assert (child.parent, child.relation) == (oc(sid), "fork")
    assert child.title == "Haiku work (fork #1)"
    assert messages(child) == [
        ("user", "Write about the sea"),
        ("assistant", "Waves fold into foam."),
        ("user", "Now the forest"),
        ("assistant", "Green light, slow and deep."),
    ]
    # the copies carry the originals' records (their ids and turns), not their own
    parent = found[oc(sid)]
    strip = [{k: v for k, v in e.items() if k != "src"} for e in parent.events]
    mine = [{k: v for k, v in e.items() if k != "src"} for e in child.events]
    shared = next(i for i, e in enumerate(strip) if e["type"] == "turn/end") + 1  # first turn
    assert mine[:shared] == strip[:shared]
    assert child.events[1]["src"]["message"] != parent.events[1]["src"]["message"]
    # a session that merely starts alike (other times) is no fork
    assert found[oc(unrelated)].parent is None


def test_a_subtask_session_is_a_subagent_child(db: OpenCodeDb) -> None:
    sid = db.session("Main")
    db.exchange(sid, "Delegate the search", "Delegated.")
    child = db.session("Find the config (@general subagent)", parent=sid)
    db.exchange(child, "Find the config", "It is in settings.toml.")
    found = read(db.path)
    assert (found[oc(child)].parent, found[oc(child)].relation) == (oc(sid), "subagent")


def test_a_revert_ends_the_main_line_and_keeps_what_it_reverted(db: OpenCodeDb) -> None:
    sid = db.session("Refactor")
    db.exchange(sid, "Rename the module", "Renamed.")
    second, _ = db.exchange(sid, "Delete the tests", "Deleted.")
    db.revert(sid, second)
    found = read(db.path)
    main = found[oc(sid)]
    assert messages(main) == [("user", "Rename the module"), ("assistant", "Renamed.")]
    reverted = found[oc(sid, second)]
    assert (reverted.parent, reverted.relation) == (oc(sid), "fork")
    assert messages(reverted)[-2:] == [("user", "Delete the tests"), ("assistant", "Deleted.")]


def test_the_import_stores_lineage_once_and_again_changes_nothing(
    tmp_path: Path, db: OpenCodeDb
) -> None:
    sid = db.session("Haiku work")
    db.exchange(sid, "Write about the sea", "Waves fold into foam.")
    second, _ = db.exchange(sid, "Now the mountains", "Stone holds up the sky.")
    forked = db.fork(sid, before=second)
    db.exchange(forked, "Now the forest", "Green light, slow and deep.")
    store = tmp_path / "store"
    root = str(db.path.parent)
    code, report = run_json("sessions", "import", "--from", "opencode", root, "--store", str(store))
    assert code == 0, report
    assert sorted(report["imported"]) == sorted([oc(sid), oc(forked)])
    listed = rows(store)
    assert listed[oc(forked)]["parentSession"] == oc(sid)
    seed = listed[oc(forked)]["seedLength"]
    assert seed > 0
    # the shared history is stored once: the fork's file names its parent's lines
    header, first_own = (orjson.loads(line) for line in stored_lines(store, oc(forked))[:2])
    assert (header["seedIn"]["session"], header["seedIn"]["events"]) == (oc(sid), seed)
    assert (first_own["seq"], first_own["type"]) == (seed + 1, "history/fork")
    before = {p.name: p.stat().st_mtime_ns for p in (store / "sessions").glob("*.jsonl")}
    code, again = run_json("sessions", "import", "--from", "opencode", root, "--store", str(store))
    assert code == 0
    assert again["imported"] == again["updated"] == []
    assert {p.name: p.stat().st_mtime_ns for p in (store / "sessions").glob("*.jsonl")} == before
    # OpenCode writes on (into its WAL): only the grown session is appended to
    before_bytes = (store / "sessions" / f"{oc(sid)}.jsonl").read_bytes()
    main_file = db.path.stat()
    db.exchange(sid, "And a third?", "Rivers run to sea.")
    # the database file itself is as it was: the change is in its WAL alone
    assert (db.path.stat().st_size, db.path.stat().st_mtime_ns) == (
        main_file.st_size,
        main_file.st_mtime_ns,
    )
    code, grown = run_json("sessions", "import", "--from", "opencode", root, "--store", str(store))
    assert code == 0, grown
    assert grown["updated"] == [oc(sid)]
    assert grown["unchanged"] == [oc(forked)]
    after = (store / "sessions" / f"{oc(sid)}.jsonl").read_bytes()
    assert after.startswith(before_bytes)
    assert b"Rivers run to sea." in after[len(before_bytes) :]


def test_reading_never_blocks_a_writer_and_sees_only_committed_rows(db: OpenCodeDb) -> None:
    sid = db.session("Live")
    db.exchange(sid, "First", "One.")
    db.conn.execute("BEGIN IMMEDIATE")  # OpenCode in the middle of a write
    db.user(sid, "Second, not committed")
    found = read(db.path)  # a read-only snapshot: no wait on the writer's lock
    assert messages(found[oc(sid)]) == [("user", "First"), ("assistant", "One.")]
    db.conn.execute("COMMIT")
    assert Path(f"{db.path}-wal").stat().st_size > 0  # the rows are in the WAL only
    assert messages(read(db.path)[oc(sid)])[-1] == ("user", "Second, not committed")
    # and a reader holding its snapshot does not stop OpenCode from writing
    reader = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM message").fetchone()
    db.user(sid, "Third")
    reader.close()


def test_a_file_that_is_not_an_opencode_database_fails(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(FormatError):
        READER.read(other)
    text = tmp_path / "opencode.db"
    text.write_bytes(b"not a database")
    with pytest.raises(FormatError):
        READER.read(text)


def test_default_location_and_detection(tmp_path: Path, db: OpenCodeDb) -> None:
    home = tmp_path / "home"
    assert READER.default_roots({}, home) == [home / ".local" / "share" / "opencode"]
    assert READER.default_roots({"XDG_DATA_HOME": str(tmp_path / "data")}, home) == [
        tmp_path / "data" / "opencode"
    ]
    assert list(READER.session_files(db.path.parent)) == [db.path]
    sid = db.session("Found")
    db.exchange(sid, "Hello", "Hi.")
    assert detect(db.path) == "opencode"


def test_the_older_storage_tree_reads_as_the_database_does(tmp_path: Path, db: OpenCodeDb) -> None:
    from opencode_fixtures import to_storage

    sid = db.session("Haiku work")
    db.exchange(sid, "Write about the sea", "Waves fold into foam.")
    second, _ = db.exchange(sid, "Now the mountains", "Stone holds up the sky.")
    forked = db.fork(sid, before=second)
    db.exchange(forked, "Now the forest", "Green light, slow and deep.")
    child = db.session("Look around", parent=sid)
    db.exchange(child, "Find it", "Found.")
    db.revert(sid, second)
    data = tmp_path / "legacy" / "opencode"
    files = to_storage(db, data / "storage")
    assert list(READER.session_files(data)) == files
    assert detect(files[0]) == "opencode"
    from_db = read(db.path)
    from_files = {s.id: s for f in files for s in READER.read(f)}
    assert sorted(from_files) == sorted(from_db)
    for key, session in from_db.items():
        legacy = from_files[key]
        assert (legacy.parent, legacy.relation, legacy.title) == (
            session.parent, session.relation, session.title
        )
        assert [{k: v for k, v in e.items() if k != "src"} for e in legacy.events] == [
            {k: v for k, v in e.items() if k != "src"} for e in session.events
        ]
        assert legacy.source.path == str(data / "storage" / "session" / "global" / f"{legacy.source.id}.json")
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "opencode", str(data), "--store", str(store))
    assert code == 0, report
    assert sorted(report["imported"]) == sorted(from_db)
    assert rows(store)[oc(forked)]["seedLength"] > 0
    code, again = run_json("sessions", "import", "--from", "opencode", str(data), "--store", str(store))
    assert (code, again["imported"], again["updated"]) == (0, [], [])
