"""Writing a Forkwise session as a Claude Code transcript: shared lines byte-for-byte but
the session id, new turns in Claude Code's shape, the file where `claude --resume` finds
it, and the round trip back through the reader."""

from __future__ import annotations

import dataclasses
import os
import uuid as uuidlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_checks import convo, export_input, stored
from claude_fixtures import (
    SID,
    Transcript,
    det_uuid,
    forkwise_turn,
    project_file,
    rewound,
    rich_transcript,
    write_old,
)

from forkwise.core.formats.base import FormatError
from forkwise.core.formats.claude import READER, WRITER
from forkwise.core.formats.claude.writer import replace_session_id


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_replace_session_id_touches_only_the_top_level_value() -> None:
    new = "00000000-1111-4222-8333-444444444444"
    line = (
        b'{"message":{"content":"say \\"sessionId\\":\\"old\\""},"sessionId":"old",'
        b'"forkedFrom":{"sessionId":"old","messageUuid":"u"}}'
    )
    out = replace_session_id(line, new)
    assert out == line.replace(b'"sessionId":"old",', b'"sessionId":"%s",' % new.encode(), 1)
    decoded = orjson.loads(out)
    assert decoded["sessionId"] == new
    assert decoded["forkedFrom"]["sessionId"] == "old"
    assert decoded["message"]["content"] == 'say "sessionId":"old"'
    spaced = b'{ "sessionId" : "a\\"b", "x": 1 }'
    assert replace_session_id(spaced, new) == b'{ "sessionId" : "%s", "x": 1 }' % new.encode()
    plain = b'{"type":"summary","summary":"sessionId","leafUuid":"u"}'
    assert replace_session_id(plain, new) == plain
    nested_only = b'{"type":"x","data":{"sessionId":"old"}}'
    assert replace_session_id(nested_only, new) == nested_only


def test_export_copies_every_line_changing_only_the_session_id(tmp_path: Path) -> None:
    source = write_old(rich_transcript(), tmp_path / "src")
    main = READER.read(source)[0]
    root = tmp_path / "claude"
    done = WRITER.export(export_input(main), root, None)
    assert uuidlib.UUID(done.id).version == 4
    assert done.resume == f"claude --resume {done.id}"
    assert done.path == root / "projects" / "-home-dev-proj-x" / f"{done.id}.jsonl"
    assert done.path.stat().st_mode & 0o777 == 0o600
    before, after = lines_of(source), lines_of(done.path)
    assert len(after) == len(before)
    old_key = b'"sessionId":"%s"' % SID.encode()
    new_key = b'"sessionId":"%s"' % done.id.encode()
    for old, new in zip(before, after, strict=True):
        if old_key in old:
            assert new == old.replace(old_key, new_key, 1)
        else:
            assert new == old  # snapshots and summaries carry no session id
    again = READER.read(done.path)[0]
    assert again.id == f"claude-{done.id}"
    assert convo(again) == convo(main)
    assert again.title == "Listing"


def test_default_root_follows_claude_config_dir(tmp_path: Path) -> None:
    assert WRITER.default_root({}, tmp_path) == tmp_path / ".claude" / "projects"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "c")}
    assert WRITER.default_root(env, tmp_path) == tmp_path / "c" / "projects"


def resume_chain(path: Path) -> list[dict[str, Any]]:
    """What `claude --resume` loads (Claude Code 2.0.77, getLastLog): the chain of
    parentUuid links ending at the latest non-sidechain entry."""
    entries = [orjson.loads(raw) for raw in lines_of(path)]
    tree = {e["uuid"]: e for e in entries if e.get("type") in ("user", "assistant", "system")}
    last = max((e for e in tree.values() if not e.get("isSidechain")), key=lambda e: e["timestamp"])
    chain = []
    node: dict[str, Any] | None = last
    while node is not None:
        chain.append(node)
        node = tree.get(node.get("parentUuid") or "")
    return chain[::-1]


def chain_text(chain: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in chain:
        if "message" not in e:
            continue  # a compaction boundary
        content = e["message"]["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def test_export_of_a_rewound_branch_resumes_that_branch(tmp_path: Path) -> None:
    t = Transcript(SID)
    rewound(t)
    sessions = READER.read(write_old(t, tmp_path / "src"))
    branch = sessions[1]
    done = WRITER.export(export_input(branch), tmp_path / "claude", None)
    assert chain_text(resume_chain(done.path)) == [c[1] for c in convo(branch)]
    assert convo(READER.read(done.path)[0]) == convo(branch)


def test_fork_with_turns_added_in_forkwise(tmp_path: Path) -> None:
    source = write_old(rich_transcript(), tmp_path / "src")
    main = READER.read(source)[0]
    session = export_input(main, forkwise_turn(main))
    done = WRITER.export(session, tmp_path / "claude", None)
    copied = len(lines_of(source))
    written = [orjson.loads(raw) for raw in lines_of(done.path)]
    new = written[copied:]
    kinds = ["user", "assistant", "assistant", "user", "assistant", "custom-title"]
    assert [e["type"] for e in new] == kinds
    last_copied = next(e["uuid"] for e in reversed(written[:copied]) if "parentUuid" in e)
    parent = last_copied
    for e in new[:5]:
        assert e["parentUuid"] == parent
        assert uuidlib.UUID(e["uuid"]).version == 4
        assert (e["sessionId"], e["cwd"], e["version"]) == (done.id, main.cwd, "2.0.77")
        assert e["isSidechain"] is False
        parent = e["uuid"]
    # one Forkwise timestamp for the whole turn: written strictly increasing, so that the
    # latest entry (what `claude --resume` continues) is the end of the chain
    stamps = [e["timestamp"] for e in new[:5]]
    assert stamps[0] == "2026-02-01T10:00:00.000Z"
    assert stamps == sorted(set(stamps))
    assert new[0]["message"] == {"role": "user", "content": "count the lines"}
    # one entry per content block, sharing message.id, as Claude Code writes a reply
    first, second = new[1]["message"], new[2]["message"]
    assert first["id"] == second["id"]
    assert first["content"] == [{"type": "text", "text": "Counting."}]
    assert (first["stop_reason"], second["stop_reason"]) == (None, "tool_use")
    (use,) = second["content"]
    call = use["id"]
    assert call.startswith("toolu_")
    assert (use["type"], use["name"], use["input"]) == ("tool_use", "Bash", {"command": "wc -l"})
    assert new[3]["message"]["content"] == [
        {"tool_use_id": call, "type": "tool_result", "content": "42"}
    ]
    assert new[3]["sourceToolAssistantUUID"] == new[2]["uuid"]
    assert new[5] == {"type": "custom-title", "customTitle": "Counting fork", "sessionId": done.id}
    # the round trip: the reader gives the same messages (role, text, tool calls)
    back = READER.read(done.path)
    assert len(back) == 1
    expected = [
        *convo(main),
        ("user", "count the lines", []),
        ("assistant", "Counting.", [("Bash", {"command": "wc -l"})]),
        ("assistant", "There are 42 lines.", []),
    ]
    assert convo(back[0]) == expected
    assert back[0].title == "Counting fork"
    result = [e for e in back[0].events if e["type"] == "tool/result"][-1]
    assert (result["call"], result["output"], result["tool"]) == (call, "42", "Bash")
    assert chain_text(resume_chain(done.path))[-3:] == [
        "count the lines",
        "Counting.",
        "There are 42 lines.",
    ]
    stored(back, tmp_path / "store")


def test_out_names_the_file_and_a_missing_folder_writes_nothing(tmp_path: Path) -> None:
    main = READER.read(write_old(rich_transcript(), tmp_path / "src"))[0]
    target = tmp_path / "out" / "x.jsonl"
    with pytest.raises(FormatError):
        WRITER.export(export_input(main), tmp_path / "claude", target)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "claude").exists()
    target.parent.mkdir()
    nowhere = dataclasses.replace(export_input(main), cwd="")
    with pytest.raises(FormatError):
        WRITER.export(nowhere, tmp_path / "claude", None)
    assert not (tmp_path / "claude").exists()
    done = WRITER.export(nowhere, tmp_path / "claude", target)
    assert done.path == target
    assert os.listdir(target.parent) == ["x.jsonl"]
    assert convo(READER.read(target)[0]) == convo(main)


def test_source_changed_under_the_session_is_an_error(tmp_path: Path) -> None:
    source = write_old(rich_transcript(), tmp_path / "src")
    main = READER.read(source)[0]
    source.write_bytes(b"\n".join(lines_of(source)[:3]) + b"\n")
    with pytest.raises(FormatError) as err:
        WRITER.export(export_input(main), tmp_path / "claude", None)
    assert err.value.line is not None
    assert err.value.line > 3
    assert not (tmp_path / "claude" / "projects").exists() or not any(
        (tmp_path / "claude" / "projects").rglob("*.jsonl")
    )


def test_source_rewritten_under_the_session_is_an_error(tmp_path: Path) -> None:
    source = write_old(rich_transcript(), tmp_path / "src")
    main = READER.read(source)[0]
    lines = lines_of(source)
    lines[0], lines[2] = lines[2], lines[0]  # same length, other entries at those lines
    source.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FormatError) as err:
        WRITER.export(export_input(main), tmp_path / "claude", None)
    assert err.value.line == 1


def test_project_folder_matches_fixture_layout(tmp_path: Path) -> None:
    t = rich_transcript()
    path = project_file(tmp_path, t)
    main = READER.read(write_old(t, tmp_path))[0]
    done = WRITER.export(export_input(main), tmp_path, None)
    assert done.path.parent == path.parent


def test_calls_left_open_by_a_cancelled_turn_get_an_interrupted_result(tmp_path: Path) -> None:
    main = READER.read(write_old(rich_transcript(), tmp_path / "src"))[0]
    ts = "2026-02-01T10:00:00.000Z"
    turn = "turn:fw-2"
    added = [
        {"type": "turn/start", "ts": ts, "turn": turn},
        {
            "type": "message",
            "ts": ts,
            "turn": turn,
            "id": "user:go:1",
            "role": "user",
            "parts": [{"type": "text", "text": "run both"}],
        },
        {
            "type": "message",
            "ts": ts,
            "turn": turn,
            "id": "assistant:go:2",
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "toolu_one", "name": "Bash", "args": {"command": "a"}},
                {"type": "tool_call", "id": "toolu_two", "name": "Bash", "args": {"command": "b"}},
            ],
        },
        {"type": "tool/result", "ts": ts, "turn": turn, "call": "toolu_one", "tool": "Bash", "output": {"ok": 1}},
        {"type": "turn/end", "ts": ts, "turn": turn, "status": "cancelled"},
    ]  # fmt: skip
    session = export_input(main, added)
    session = dataclasses.replace(session, model={"provider": "anthropic", "model": "claude-x"})
    done = WRITER.export(session, tmp_path / "claude", None)
    written = [orjson.loads(raw) for raw in lines_of(done.path)]
    results = [
        block for e in written[-4:] if e.get("type") == "user" for block in e["message"]["content"]
    ]
    assert results == [
        {"tool_use_id": "toolu_one", "type": "tool_result", "content": '{"ok":1}'},
        {
            "tool_use_id": "toolu_two",
            "type": "tool_result",
            "content": "[Request interrupted by user for tool use]",
            "is_error": True,
        },
    ]
    models = {e["message"]["model"] for e in written[-3:] if e.get("type") == "assistant"}
    assert models == {"claude-x"}
    back = READER.read(done.path)[0]
    assert convo(back)[-2:] == [
        ("user", "run both", []),
        ("assistant", "", [("Bash", {"command": "a"}), ("Bash", {"command": "b"})]),
    ]


def test_new_entries_continue_the_line_and_replays_stay_beside_it(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.user("hello")
    (reply,) = t.assistant([{"type": "text", "text": "hi"}])
    copy = dict(t.entries[-1], uuid=det_uuid("replayed copy"))
    t.entries.append(copy)  # the reply written again under a new uuid: the line's end now
    source = write_old(t, tmp_path / "src")
    main = READER.read(source)[0]
    assert "plugin/claude/replayed" in [e["type"] for e in main.events]
    done = WRITER.export(export_input(main, forkwise_turn(main)), tmp_path / "claude", None)
    written = [orjson.loads(raw) for raw in lines_of(done.path)]
    first_new = written[len(lines_of(source))]
    assert first_new["message"] == {"role": "user", "content": "count the lines"}
    assert first_new["parentUuid"] == copy["uuid"]
    # the older copy is kept, byte for byte but the session id, beside the line
    kept = [e for e in written if e.get("uuid") == reply]
    assert len(kept) == 1
    assert kept[0]["sessionId"] == done.id
