"""`forkwise sessions import` on files that are readable only in part: a line that is not
JSON keeps its session (the line kept as a plugin event, a warning in the report, once per
change of the file), and a file that yields nothing is reported failed — for each format,
through the real CLI on files on disk."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_fixtures import SID, Transcript, write_old
from codex_fixtures import basic, thread_id
from gemini_fixtures import SID as GEMINI_SID
from gemini_fixtures import coding_session as gemini_session
from gemini_fixtures import settled as gemini_settled
from pi_fixtures import coding_session, settled

from forkwise.core.cli import main as cli

GARBAGE = b'{"type":"user","message":{"role":"user","content":"cut off he'


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def shown(store: Path, sid: str) -> list[dict[str, Any]]:
    code, data = run_json("sessions", "show", sid, "--store", str(store))
    assert code == 0, data
    events: list[dict[str, Any]] = data["events"]
    return events


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        p["text"]
        for e in events
        if e["type"] == "message"
        for p in e["parts"]
        if p["type"] == "text"
    ]


def torn_after(lines: list[bytes], at: int) -> bytes:
    """The file with a line that is not JSON inserted as line `at` (1-based)."""
    return b"\n".join([*lines[: at - 1], GARBAGE, *lines[at - 1 :]]) + b"\n"


def claude_file(root: Path) -> tuple[Path, str, int]:
    t = Transcript(SID)
    t.exchange("first question", "first answer")
    t.exchange("second question", "second answer")
    path = write_old(t, root)
    lines = path.read_bytes().splitlines()
    path.write_bytes(torn_after(lines, 3))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path, f"claude-{SID}", 3


def codex_file(root: Path) -> tuple[Path, str, int]:
    rollout = basic(41)
    path = rollout.write(root)
    lines = path.read_bytes().splitlines()
    at = len(lines) // 2
    path.write_bytes(torn_after(lines, at))
    os.utime(path, (1_600_000_000, 1_600_000_000))
    return path, f"codex-{thread_id(41)}", at


def pi_file(root: Path) -> tuple[Path, str, int]:
    session = coding_session()
    path = session.write(root / "sessions" / "--work--")
    lines = path.read_bytes().splitlines()
    # before a user message: the entry it parents is lost, its child names the lost one
    at = len(lines) - 3
    path.write_bytes(torn_after(lines, at))
    settled(path)
    return path, f"pi-{session.session_id}", at


def gemini_file(root: Path) -> tuple[Path, str, int]:
    path = gemini_session().write(root / ".gemini")
    lines = path.read_bytes().splitlines()
    # between the first turn's messages: the turn and the rest of the file still read
    at = 4
    path.write_bytes(torn_after(lines, at))
    gemini_settled(path)
    return path, f"gemini-{GEMINI_SID}", at


@pytest.mark.parametrize(
    ("tool", "make"),
    [("claude", claude_file), ("codex", codex_file), ("pi", pi_file), ("gemini", gemini_file)],
)
def test_a_line_that_is_not_json_keeps_the_session_with_a_warning(
    tmp_path: Path, tool: str, make: Callable[[Path], tuple[Path, str, int]]
) -> None:
    store = tmp_path / "store"
    path, sid, bad = make(tmp_path / tool)
    intact = path.read_bytes().replace(GARBAGE + b"\n", b"")
    code, report = run_json("sessions", "import", "--from", tool, str(path),
                            "--store", str(store))  # fmt: skip
    assert code == 0, report
    assert report["imported"][0] == sid
    assert report["failed"] == []
    (warning,) = report["warnings"]
    assert (warning["path"], warning["line"], warning["code"]) == (
        str(path), bad, "unreadable-line"
    )
    assert f"line {bad} is not JSON" in warning["message"]
    events = shown(store, sid)
    kept = [e for e in events if e["type"] == f"plugin/{tool}/unreadable"]
    assert [(k["text"], k["src"]["lines"]) for k in kept] == [(GARBAGE.decode(), [bad])]
    # the whole conversation is there: the same messages as the file without the line
    clean = tmp_path / "clean" / path.name
    clean.parent.mkdir()
    clean.write_bytes(intact)
    other = tmp_path / "other"
    code, _ = run_json("sessions", "import", "--from", tool, str(clean), "--store", str(other))
    assert code == 0
    assert texts(events) == texts(shown(other, sid))
    assert len(texts(events)) >= 2
    # an unchanged file is not read again: its warnings were given when it changed
    code, again = run_json("sessions", "import", "--from", tool, str(path),
                           "--store", str(store))  # fmt: skip
    assert (code, again["unchanged"][0], again["warnings"]) == (0, sid, [])
    # a change of the file reads it again: its warnings come again
    os.utime(path, None)
    code, again = run_json("sessions", "import", "--from", tool, str(path),
                           "--store", str(store))  # fmt: skip
    assert code == 0
    assert [w["line"] for w in again["warnings"]] == [bad]
    assert sid in again["unchanged"] + again["updated"]


def test_the_text_report_names_each_warning(tmp_path: Path) -> None:
    path, _, bad = claude_file(tmp_path / "claude")
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["sessions", "import", "--from", "claude", str(path), "--store", str(tmp_path / "s")],
        out=out, err=err,
    )  # fmt: skip
    assert code == 0
    assert f"warning {path}:{bad}: line {bad} is not JSON" in out.getvalue()


def test_a_minimal_claude_file_without_parent_uuids_imports_in_file_order(
    tmp_path: Path,
) -> None:
    """A summary line, then prompts and replies with a uuid but no parentUuid at all (a
    hand-written or minimal file): chained in file order, it imports as one session
    (before, `--from claude FILE` printed an empty report)."""
    sid = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
    lines: list[dict[str, Any]] = [{"type": "summary", "summary": "A minimal session"}]
    for n, (role, text) in enumerate(
        [("user", "what is 2+2?"), ("assistant", "4"), ("user", "and 3+3?"), ("assistant", "6")]
    ):
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message |= {"id": f"msg_{n}", "model": "claude-sonnet-4-5", "stop_reason": "end_turn"}
        lines.append({
            "type": role, "uuid": f"u{n}", "sessionId": sid, "cwd": "/work",
            "timestamp": f"2026-01-01T00:00:0{n}.000Z", "message": message,
        })  # fmt: skip
    path = tmp_path / "projects" / "-work" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "claude", str(path),
                            "--store", str(store))  # fmt: skip
    assert (code, report["imported"], report["failed"]) == (0, [f"claude-{sid}"], [])
    events = shown(store, f"claude-{sid}")
    assert texts(events) == ["what is 2+2?", "4", "and 3+3?", "6"]
    assert [e["status"] for e in events if e["type"] == "turn/end"] == ["completed"] * 2
    code, rows = run_json("sessions", "list", "--store", str(store))
    assert [r["title"] for r in rows] == ["A minimal session"]


@pytest.mark.parametrize("ending", [b"\n", b""])
@pytest.mark.parametrize("tool", ["claude", "codex", "pi"])
def test_a_file_whose_only_line_is_not_json_is_reported_failed(
    tmp_path: Path, tool: str, ending: bytes
) -> None:
    """Nothing readable, nothing imported: the file is in `failed`, never silently done
    (before, a Claude Code file was recorded as imported with no session)."""
    name = {
        "claude": f"projects/-work/{SID}.jsonl",
        "codex": f"sessions/2025/09/01/rollout-2025-09-01T10-00-00-{thread_id(42)}.jsonl",
        "pi": "sessions/--work--/2026-01-01T00-00-00-000Z_0193a1b2-0000-7000-8000-00000000002a.jsonl",
    }[tool]
    path = tmp_path / tool / name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{this is not json" + ending)
    os.utime(path, (1_600_000_000, 1_600_000_000))
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", tool, str(path),
                            "--store", str(store))  # fmt: skip
    assert code == 1
    assert report["imported"] == []
    assert [f["path"] for f in report["failed"]] == [str(path)]
    # and it is tried again (not remembered as done) on the next import
    code, again = run_json("sessions", "import", "--from", tool, str(path),
                           "--store", str(store))  # fmt: skip
    assert (code, [f["path"] for f in again["failed"]]) == (1, [str(path)])


def test_an_opencode_row_whose_data_is_not_json_keeps_its_session(tmp_path: Path) -> None:
    """OpenCode's database: a message row and a part row whose `data` is cut off are
    kept where they stand as plugin/opencode/unreadable, each named in the report's
    warnings; the session's other messages import (before, both rows were dropped
    without a word)."""
    from opencode_fixtures import OpenCodeDb
    from opencode_fixtures import settled as opencode_settled

    from forkwise.core.formats.base import source_session_id

    db = OpenCodeDb(tmp_path / "data" / "opencode" / "opencode.db")
    sid = db.session("Torn rows")
    db.exchange(sid, "first question", "first answer")
    asked, answered = db.exchange(sid, "second question", "second answer")
    db.exchange(sid, "third question", "third answer")
    torn_message = b'{"role":"assistant","time":{"crea'
    db.conn.execute("UPDATE message SET data = ? WHERE id = ?", (torn_message.decode(), answered))
    (part_id,) = db.conn.execute(
        "SELECT id FROM part WHERE message_id = ? ORDER BY id LIMIT 1", (asked,)
    ).fetchone()
    db.conn.execute("UPDATE part SET data = 'garbage' WHERE id = ?", (part_id,))
    db.close()
    path = opencode_settled(db.path)
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "opencode", str(path),
                            "--store", str(store))  # fmt: skip
    assert code == 0, report
    oid = source_session_id("opencode", sid)
    assert report["imported"] == [oid]
    assert report["failed"] == []
    assert sorted((w["path"], w["line"], w["code"]) for w in report["warnings"]) == [
        (str(path), None, "unreadable-line")
    ] * 2
    named = " ".join(w["message"] for w in report["warnings"])
    assert f"message {answered}" in named
    assert f"part {part_id}" in named
    events = shown(store, oid)
    kept = [e for e in events if e["type"] == "plugin/opencode/unreadable"]
    assert sorted(k["text"] for k in kept) == sorted([torn_message.decode(), "garbage"])
    assert {k["src"]["message"] for k in kept} == {asked, answered}
    assert texts(events) == ["first question", "first answer", "third question", "third answer"]
