"""Writing Forkwise sessions as files `opencode import` takes: OpenCode's export shape, new
ids of OpenCode's kind everywhere, the source's messages and parts as the database holds
them, new turns as OpenCode messages; read back after an import as OpenCode does it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from opencode_fixtures import OpenCodeDb
from pi_export import export_input, forked_with_new_turns, last_turn_end

from forkwise.core.formats.base import FormatError, ImportedSession, source_session_id
from forkwise.core.formats.opencode import READER, WRITER

_ID = re.compile(r"^(ses|msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}$")


def messages(session: ImportedSession) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]


def opencode_import(db: OpenCodeDb, exported: dict[str, Any]) -> None:
    """What `opencode import FILE` does with the file (packages/opencode/src/cli/cmd/
    import.ts): the session row, then each message and part under the ids the file gives,
    an id already there skipped."""
    info = exported["info"]
    db.conn.execute(
        "INSERT INTO session (id, project_id, slug, directory, path, title, version,"
        " time_created, time_updated) VALUES (?, 'global', ?, ?, '', ?, ?, ?, ?)",
        (info["id"], info["slug"], info["directory"], info["title"], info["version"],
         info["time"]["created"], info["time"]["updated"]),
    )
    for message in exported["messages"]:
        m = message["info"]
        data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
        db.conn.execute(
            "INSERT OR IGNORE INTO message VALUES (?, ?, ?, ?, ?)",
            (m["id"], info["id"], m["time"]["created"], m["time"]["created"],
             orjson.dumps(data).decode()),
        )
        for part in message["parts"]:
            data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
            db.conn.execute(
                "INSERT OR IGNORE INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (part["id"], part["messageID"], info["id"], 0, 0, orjson.dumps(data).decode()),
            )


@pytest.fixture
def db(tmp_path: Path) -> OpenCodeDb:
    made = OpenCodeDb(tmp_path / "data" / "opencode" / "opencode.db")
    yield made  # type: ignore[misc]
    made.close()


def source(db: OpenCodeDb) -> tuple[str, ImportedSession]:
    sid = db.session("Fix the parser")
    asked = db.user(sid, "Why does the parser fail?")
    db.assistant(sid, asked, tools=[{"tool": "read", "call": "call_1",
                                     "input": {"filePath": "parser.py"}, "output": "pass"}],
                 finish="tool-calls")
    db.assistant(sid, asked, "It has no body.")
    db.exchange(sid, "Thanks", "Welcome.")
    found = {s.id: s for s in READER.read(db.path)}
    return sid, found[source_session_id("opencode", sid)]


def test_an_imported_session_is_written_with_new_ids_and_its_own_content(
    tmp_path: Path, db: OpenCodeDb
) -> None:
    sid, imported = source(db)
    done = WRITER.export(export_input(imported), db.path.parent, None)
    assert done.path == db.path.parent / "forkwise-exports" / f"{done.id}.json"
    assert done.resume == f"opencode import {done.path} && opencode -s {done.id}"
    exported = orjson.loads(done.path.read_bytes())
    info = exported["info"]
    assert _ID.match(info["id"])
    assert info["id"] == done.id
    assert info["title"] == "Fix the parser"
    assert info["directory"] == imported.cwd
    written = exported["messages"]
    assert len(written) == 5
    rows = db.conn.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)
    ).fetchall()
    new_ids = [m["info"]["id"] for m in written]
    assert all(_ID.match(i) for i in new_ids)
    assert not {i for i, _ in rows} & set(new_ids)  # OpenCode would skip a known id
    assert new_ids == sorted(new_ids)  # ascending, as OpenCode orders a session's messages
    for (_old_id, data), message in zip(rows, written, strict=True):
        original = orjson.loads(data)
        mine = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID", "parentID")}
        assert mine == {k: v for k, v in original.items() if k != "parentID"}
        for part in message["parts"]:
            assert _ID.match(part["id"])
            assert (part["messageID"], part["sessionID"]) == (message["info"]["id"], done.id)
    # an answer's parentID follows its prompt's new id
    assert written[1]["info"]["parentID"] == written[0]["info"]["id"]
    assert written[2]["info"]["parentID"] == written[0]["info"]["id"]
    # imported by OpenCode and read back: the same conversation
    opencode_import(db, exported)
    found = {s.id: s for s in READER.read(db.path)}
    back = found[source_session_id("opencode", done.id)]
    assert messages(back) == messages(imported)
    # and it is recognised as a copy of its source (same content and times)
    assert back.parent == imported.id


def test_turns_added_in_forkwise_become_opencode_messages(db: OpenCodeDb) -> None:
    _, imported = source(db)
    boundary = last_turn_end(imported.events, before=len(imported.events) - 1)
    events = forked_with_new_turns(imported, boundary)
    done = WRITER.export(export_input(imported, events), db.path.parent, None)
    exported = orjson.loads(done.path.read_bytes())
    user, answer, final = exported["messages"][-3:]
    assert user["info"]["role"] == "user"
    assert user["parts"][0]["text"] == "Try again, shorter"
    assert answer["info"]["role"] == "assistant"
    assert (answer["info"]["providerID"], answer["info"]["modelID"]) == ("openai", "qwen3-coder")
    assert answer["info"]["parentID"] == user["info"]["id"]
    tool = next(p for p in answer["parts"] if p["type"] == "tool")
    assert tool["callID"] == "call_fw_1"
    assert tool["state"]["status"] == "completed"
    assert tool["state"]["output"] == "# Demo"
    assert final["parts"][0]["text"] == "A demo."
    opencode_import(db, exported)
    found = {s.id: s for s in READER.read(db.path)}
    back = found[source_session_id("opencode", done.id)]
    assert messages(back)[-3:] == [
        ("user", "Try again, shorter"),
        ("assistant", ""),
        ("assistant", "A demo."),
    ]
    assert [e["output"] for e in back.events if e["type"] == "tool/result"][-1] == "# Demo"


def test_a_missing_folder_writes_nothing_and_a_vanished_source_is_refused(
    tmp_path: Path, db: OpenCodeDb
) -> None:
    _, imported = source(db)
    with pytest.raises(FormatError, match="does not exist"):
        WRITER.export(export_input(imported), db.path.parent, tmp_path / "nowhere" / "x.json")
    db.conn.execute("DELETE FROM message")
    with pytest.raises(FormatError, match="no longer"):
        WRITER.export(export_input(imported), db.path.parent, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_a_session_of_the_older_storage_tree_is_written_from_its_files(
    tmp_path: Path, db: OpenCodeDb
) -> None:
    from opencode_fixtures import to_storage

    _, imported = source(db)
    [file] = to_storage(db, tmp_path / "legacy" / "storage")
    [legacy] = READER.read(file)
    db.conn.execute("DELETE FROM part")  # only the files hold the messages now
    done = WRITER.export(export_input(legacy), tmp_path, tmp_path / "out.json")
    exported = orjson.loads(done.path.read_bytes())
    texts = [p.get("text") for m in exported["messages"] for p in m["parts"] if p["type"] == "text"]
    assert texts == [t for _, t in messages(imported) if t]


@pytest.mark.parametrize("tool", ["claude", "codex", "pi", "gemini"])
def test_an_opencode_session_continues_in_the_other_agents_too(
    tmp_path: Path, db: OpenCodeDb, tool: str
) -> None:
    from forkwise.core.host.importing import format_module

    _, imported = source(db)
    module = format_module(tool)
    done = module.WRITER.export(export_input(imported), tmp_path / tool, None)
    back = next(s for s in module.READER.read(done.path) if s.parent is None)
    assert [t for _, t in messages(back) if t] == [t for _, t in messages(imported) if t]
