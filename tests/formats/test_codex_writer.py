"""The Codex writer: a new thread whose shared lines are the source's own, turns added in
Forkwise rendered as Codex writes them, and a round trip through the reader."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from codex_fixtures import BARE_TS, Rollout, basic, fork_of, thread_id, write_bare

from forkwise.core.errors import StaleSession, StorageError
from forkwise.core.formats.base import ExportInput, ImportedSession
from forkwise.core.formats.codex import WRITER, CodexReader

ADDED_TS = "2025-09-02T08:00:00.000Z"


def as_stored(*sessions: ImportedSession, extra: list[dict[str, Any]] = ()) -> ExportInput:
    """What the export verb hands over: the last session's events with seq (plus `extra`),
    and the sources of it and its ancestors."""
    session = sessions[-1]
    events = [dict(e) for e in session.events] + [dict(e) for e in extra]
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    return ExportInput(
        session_id=session.id,
        cwd=session.cwd,
        title=session.title,
        created=session.created,
        events=events,
        sources={s.source.id: s.source for s in sessions},
    )


def added_turn(text: str = "added in forkwise") -> list[dict[str, Any]]:
    turn = "turn-fw-1"
    call = {
        "type": "tool_call",
        "id": "call_fw",
        "name": "shell",
        "args": {"command": ["bash", "-lc", "ls"]},
    }
    return [
        {
            "type": "model/select",
            "provider": "openai",
            "model": "gpt-5",
            "reasoning": "low",
            "ts": ADDED_TS,
        },
        {"type": "turn/start", "turn": turn, "ts": ADDED_TS},
        {
            "type": "message",
            "id": "user:added:1",
            "role": "user",
            "turn": turn,
            "parts": [{"type": "text", "text": text}],
            "ts": ADDED_TS,
        },
        {
            "type": "message",
            "id": "assistant:call:1",
            "role": "assistant",
            "turn": turn,
            "parts": [{"type": "reasoning", "text": "look first"}, call],
            "ts": ADDED_TS,
        },
        {
            "type": "tool/result",
            "turn": turn,
            "call": "call_fw",
            "tool": "shell",
            "output": "a.py",
            "ts": ADDED_TS,
        },
        {
            "type": "message",
            "id": "assistant:answer:1",
            "role": "assistant",
            "turn": turn,
            "parts": [{"type": "text", "text": "one file"}],
            "ts": ADDED_TS,
        },
        {"type": "turn/end", "turn": turn, "status": "completed", "ts": ADDED_TS},
    ]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def conversation(session: ImportedSession) -> list[tuple[str, list[tuple[str, Any]]]]:
    """Messages as (role, parts without ids) — what must survive a round trip."""
    out = []
    for e in session.events:
        if e["type"] == "message":
            parts = [
                (p["type"], p.get("text") or (p.get("name"), p.get("args"))) for p in e["parts"]
            ]
            out.append((e["role"], parts))
    return out


def test_export_copies_the_source_lines_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    source_path = basic().write(home)
    source = CodexReader().read(source_path)[0]
    result = WRITER.export(as_stored(source), home, None)
    assert result.resume == f"codex resume {result.id}"
    assert uuid.UUID(result.id).version == 7
    day = result.path.parent.relative_to(home)
    assert day.parts[0] == "sessions"
    assert len(day.parts) == 4
    assert result.path.name.startswith("rollout-")
    assert result.path.name.endswith(f"-{result.id}.jsonl")
    first, rest = result.path.read_bytes().split(b"\n", 1)
    assert rest == source_path.read_bytes()  # every source line, unchanged, in order
    meta = json.loads(first)
    assert meta["type"] == "session_meta"
    payload = meta["payload"]
    assert payload["id"] == result.id
    assert payload["forked_from_id"] == thread_id(1)
    assert payload["cwd"] == "/work/proj"
    assert payload["cli_version"] == "0.46.0"
    assert payload["originator"] == "codex_cli_rs"
    assert payload["base_instructions"] == {"text": "You are Codex, a coding agent."}
    assert meta["timestamp"] == payload["timestamp"]


def test_export_of_a_fork_with_turns_added_in_forkwise(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    r = Rollout(thread_id(20)).meta()
    r.turn("first", "one", first=True)
    kept = len(r.lines)
    r.turn("second", "two")
    source_path = r.write(home)
    source = CodexReader().read(source_path)[0]
    # a Forkwise fork after the first turn, then a turn typed in Forkwise
    cut = next(i for i, e in enumerate(source.events) if e["type"] == "turn/end") + 1
    source.events = [
        *source.events[:cut],
        {"type": "history/fork", "source": source.id, "boundary": cut, "ts": ADDED_TS},
    ]
    result = WRITER.export(as_stored(source, extra=added_turn()), home, None)

    lines = result.path.read_bytes().split(b"\n")
    assert lines[1 : kept + 1] == source_path.read_bytes().split(b"\n")[:kept]
    added = [json.loads(x) for x in lines[kept + 1 :] if x]
    shapes = [(a["type"], a["payload"].get("type"), a["payload"].get("role")) for a in added]
    assert shapes == [
        ("event_msg", "task_started", None),
        ("turn_context", None, None),
        ("response_item", "message", "user"),
        ("event_msg", "user_message", None),
        ("event_msg", "agent_reasoning", None),
        ("response_item", "reasoning", None),
        ("response_item", "function_call", None),
        ("response_item", "function_call_output", None),
        ("event_msg", "agent_message", None),
        ("response_item", "message", "assistant"),
        ("event_msg", "task_complete", None),
    ]
    assert all(a["timestamp"] == ADDED_TS for a in added)
    context = added[1]["payload"]
    assert (context["model"], context["effort"], context["turn_id"]) == (
        "gpt-5",
        "low",
        "turn-fw-1",
    )
    assert context["approval_policy"] == "on-request"  # the source's own settings carry on
    call = added[6]["payload"]
    assert json.loads(call["arguments"]) == {"command": ["bash", "-lc", "ls"]}
    assert call["call_id"] == added[7]["payload"]["call_id"] == "call_fw"
    assert added[3]["payload"]["message"] == "added in forkwise"
    assert added[10]["payload"]["last_agent_message"] == "one file"


def test_round_trip_gives_the_same_messages(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    parent = basic(21)
    child = fork_of(parent, thread_id(22))
    child.turn("in the fork", "forked answer", shell=("call_f", "x", 2))
    parent.write(home)
    reader = CodexReader()
    p = reader.read(parent.path_in(home))[0]
    c = reader.read(child.write(home))[0]
    stored = as_stored(p, c, extra=added_turn())
    result = WRITER.export(stored, home, None)
    back = reader.read(result.path)[0]
    expected = [
        *conversation(c),
        ("user", [("text", "added in forkwise")]),
        ("assistant", [("reasoning", "look first")]),
        ("assistant", [("tool_call", ("shell", {"command": ["bash", "-lc", "ls"]}))]),
        ("assistant", [("text", "one file")]),
    ]
    assert conversation(back) == expected
    assert (back.parent, back.relation) == (c.id, "fork")
    results = [
        (e["call"], e["output"], e.get("error")) for e in back.events if e["type"] == "tool/result"
    ]
    assert results[-1] == ("call_fw", "a.py", None)
    # the shared part reads back as the same events (apart from where they came from)
    shared = len(c.events)
    strip = lambda evs: [{k: v for k, v in e.items() if k != "src"} for e in evs]  # noqa: E731
    assert strip(back.events[:shared]) == strip(c.events)


def test_title_goes_to_session_index(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    source = CodexReader().read(basic(23).write(home))[0]
    source.title = "Branch from Forkwise"
    result = WRITER.export(as_stored(source), home, None)
    entries = [json.loads(x) for x in (home / "session_index.jsonl").read_text().splitlines()]
    assert entries[-1]["id"] == result.id
    assert entries[-1]["thread_name"] == "Branch from Forkwise"
    assert entries[-1]["updated_at"].endswith("Z")
    assert CodexReader().read(result.path)[0].title == "Branch from Forkwise"


def test_out_path_and_missing_folder(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    source = CodexReader().read(basic(24).write(home))[0]
    with pytest.raises(StorageError):
        WRITER.export(as_stored(source), home, tmp_path / "nowhere" / "x.jsonl")
    assert not (tmp_path / "nowhere").exists()
    assert not (home / "session_index.jsonl").exists()
    out = tmp_path / "elsewhere.jsonl"
    result = WRITER.export(as_stored(source), home, out)
    assert result.path == out
    assert records(out)[0]["payload"]["id"] == result.id
    assert not (home / "session_index.jsonl").exists()  # Codex would not find it there


def test_a_session_born_in_forkwise_becomes_a_new_thread(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    stored = ExportInput(
        session_id="s-1",
        cwd="/work/other",
        title=None,
        created=ADDED_TS,
        events=[dict(e, seq=i) for i, e in enumerate(added_turn(), 1)],
        sources={},
    )
    result = WRITER.export(stored, home, None)
    meta = records(result.path)[0]["payload"]
    assert meta["id"] == result.id
    assert "forked_from_id" not in meta
    assert meta["cwd"] == "/work/other"
    back = CodexReader().read(result.path)[0]
    assert back.parent is None
    assert [role for role, _ in conversation(back)] == [
        "user",
        "assistant",
        "assistant",
        "assistant",
    ]
    assert back.title == "added in forkwise"


def test_a_source_file_that_lost_lines_is_an_error(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    path = basic(25).write(home)
    source = CodexReader().read(path)[0]
    path.write_bytes(path.read_bytes().split(b"\n", 3)[0] + b"\n")
    with pytest.raises(StaleSession) as err:
        WRITER.export(as_stored(source), home, None)
    assert err.value.code == "stale-session"
    assert list((home / "sessions").rglob("rollout-*.jsonl")) == [path]


def test_a_source_from_before_the_envelope_is_put_in_one(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    tid = thread_id(31)
    source = CodexReader().read(write_bare(home, tid))[0]
    result = WRITER.export(as_stored(source, extra=added_turn()), home, None)
    written = records(result.path)
    assert written[0]["payload"]["forked_from_id"] == tid
    assert all(set(r) == {"timestamp", "type", "payload"} for r in written)
    assert {r["timestamp"] for r in written[1:8]} == {BARE_TS}
    back = CodexReader().read(result.path)[0]
    before = conversation(source)
    assert [role for role, _ in before] == ["user", "assistant", "assistant", "user", "assistant"]
    assert conversation(back)[: len(before)] == before
    assert conversation(back)[len(before)] == ("user", [("text", "added in forkwise")])


def test_a_rolled_back_thread_exports_what_remains(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    r = Rollout(thread_id(32)).meta()
    r.turn("keep", "kept", first=True)
    r.turn("drop", "dropped")
    r.event("thread_rolled_back", num_turns=1)
    r.turn("after", "new")
    main, branch = CodexReader().read(r.write(home))
    reader = CodexReader()
    for session, expected in ((main, ["keep", "after"]), (branch, ["keep", "drop"])):
        result = WRITER.export(as_stored(session), home, None)
        back = reader.read(result.path)
        assert len(back) == 1  # no rollback left to apply
        assert [m for role, m in conversation(back[0]) if role == "user"] == [
            [("text", t)] for t in expected
        ]
