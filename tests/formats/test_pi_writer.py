"""Writing Forkwise sessions as pi session files."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from pi_export import NEW_TURN, export_input, forked_with_new_turns, last_turn_end
from pi_fixtures import SID, PiSession, branchy, coding_session, settled
from pi_store import messages, read

from forkwise.core.errors import TargetExists
from forkwise.core.formats.base import ExportInput, FormatError, ImportedSession, SourceRef
from forkwise.core.formats.pi import READER, WRITER


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def calls(session: ImportedSession) -> list[tuple[str, dict[str, Any]]]:
    return [
        (p["name"], p["args"])
        for e in session.events
        if e["type"] == "message"
        for p in e["parts"]
        if p["type"] == "tool_call"
    ]


@pytest.fixture
def imported(tmp_path: Path) -> ImportedSession:
    path = coding_session(SID).write(tmp_path / "pi" / "sessions" / "--home-ada-project--")
    [session] = read(path)
    return session


def test_an_imported_session_is_written_back_line_for_line(
    tmp_path: Path, imported: ImportedSession
) -> None:
    root = tmp_path / "agent" / "sessions"
    done = WRITER.export(export_input(imported), root, None)
    assert done.path.parent == root / "--home-ada-project--"
    assert done.path.name.endswith(f"_{done.id}.jsonl")
    assert uuid.UUID(done.id).version == 7
    assert done.resume == f"pi --session {done.path}"
    header = orjson.loads(lines(done.path)[0])
    assert list(header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert header["type"] == "session"
    assert header["version"] == 3
    assert header["id"] == done.id
    assert header["cwd"] == "/home/ada/project"
    assert header["parentSession"] == imported.source.path
    assert header["timestamp"].endswith("Z")
    assert lines(done.path)[1:] == lines(Path(imported.source.path))[1:]
    assert oct(done.path.stat().st_mode & 0o777) == "0o600"


def test_default_roots_follow_pi(tmp_path: Path) -> None:
    assert WRITER.default_root({}, tmp_path) == tmp_path / ".pi" / "agent" / "sessions"
    assert WRITER.default_root({"PI_CODING_AGENT_DIR": "/p"}, tmp_path) == Path("/p/sessions")


def test_a_branch_is_written_with_the_entries_of_its_path(tmp_path: Path) -> None:
    s, ids = branchy()
    source = s.write(tmp_path / "pi")
    _, _, c = read(source)
    done = WRITER.export(export_input(c), tmp_path / "out", None)
    path_ids = [ids[k] for k in ("q1", "a1", "q3", "a3", "q6", "a6")]
    expected = [line for line in lines(source)[1:] if orjson.loads(line)["id"] in path_ids]
    assert lines(done.path)[1:] == expected
    # pi continues from the last entry: the branch's leaf
    assert orjson.loads(lines(done.path)[-1])["id"] == ids["a6"]


def test_turns_added_in_forkwise_become_pi_entries(
    tmp_path: Path, imported: ImportedSession
) -> None:
    boundary = last_turn_end(imported.events, before=12)
    events = forked_with_new_turns(imported, boundary)
    done = WRITER.export(export_input(imported, events), tmp_path, None)
    written = lines(done.path)
    copied = {n for e in imported.events[:boundary] for n in e["src"]["lines"]}
    source_lines = lines(Path(imported.source.path))
    assert written[1 : 1 + len(copied)] == [source_lines[n - 1] for n in sorted(copied)]
    new = [orjson.loads(line) for line in written[1 + len(copied) :]]
    assert [e["type"] for e in new] == [
        "model_change",
        "thinking_level_change",
        "message",
        "message",
        "message",
        "message",
        "session_info",
        "custom",
    ]
    last_copied = orjson.loads(written[len(copied)])["id"]
    parents = [e["parentId"] for e in new]
    assert parents == [last_copied] + [e["id"] for e in new[:-1]]
    assert all(len(e["id"]) == 8 for e in new)
    assert (new[0]["provider"], new[0]["modelId"], new[1]["thinkingLevel"]) == (
        "openai",
        "qwen3-coder",
        "high",
    )
    user, ask, result, answer = (e["message"] for e in new[2:6])
    assert user == {
        "role": "user",
        "content": [{"type": "text", "text": "Try again, shorter"}],
        "timestamp": 1769936401000,
    }
    assert ask["content"] == [
        {"type": "thinking", "thinking": "Look at the file again."},
        {
            "type": "toolCall",
            "id": "call_fw_1",
            "name": "read_file",
            "arguments": {"path": "README.md"},
        },
    ]
    assert (ask["provider"], ask["model"], ask["api"], ask["stopReason"]) == (
        "openai",
        "qwen3-coder",
        "openai-completions",
        "toolUse",
    )
    assert result == {
        "role": "toolResult",
        "toolCallId": "call_fw_1",
        "toolName": "read_file",
        "content": [{"type": "text", "text": "# Demo"}],
        "isError": False,
        "timestamp": 1769936405000,
    }
    assert answer["stopReason"] == "stop"
    assert answer["content"] == [{"type": "text", "text": "A demo."}]
    assert new[6]["name"] == "Shorter summary"
    assert new[7]["customType"] == "forkwise"
    assert new[7]["data"] == {
        "type": "plugin/forkwise/bookmark",
        "ts": "2026-02-01T09:00:08.000Z",
        "note": "good one",
    }


def test_export_then_read_gives_the_same_messages(
    tmp_path: Path, imported: ImportedSession
) -> None:
    boundary = last_turn_end(imported.events, before=12)
    events = forked_with_new_turns(imported, boundary)
    done = WRITER.export(export_input(imported, events), tmp_path, None)
    [again] = read(done.path)
    forkwise = [e for e in events if e["type"] == "message"]
    expected = [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text")) for e in forkwise
    ]
    assert messages(again) == expected
    assert calls(again) == [
        (p["name"], p["args"]) for e in forkwise for p in e["parts"] if p["type"] == "tool_call"
    ]
    assert again.parent == imported.id  # its header names the source file
    assert again.relation == "fork"
    assert again.title == "Shorter summary"
    # the copied part reads exactly as the source did, so the shared prefix is found
    shared = [{k: v for k, v in e.items() if k != "src"} for e in again.events[:boundary]]
    assert shared == [
        {k: v for k, v in e.items() if k != "src"} for e in imported.events[:boundary]
    ]
    statuses = [e["status"] for e in again.events if e["type"] == "turn/end"]
    assert statuses[-1] == "completed"


def test_a_failed_or_stopped_last_answer_keeps_its_status(
    tmp_path: Path, imported: ImportedSession
) -> None:
    boundary = last_turn_end(imported.events, before=12)
    events = forked_with_new_turns(imported, boundary)
    end = next(e for e in events if e["type"] == "turn/end" and e["turn"] == NEW_TURN)
    end["status"] = "failed"
    end["error"] = "endpoint refused"
    done = WRITER.export(export_input(imported, events), tmp_path, None)
    answer = orjson.loads(lines(done.path)[-3])["message"]
    assert (answer["stopReason"], answer["errorMessage"]) == ("error", "endpoint refused")
    [again] = read(done.path)
    assert [e["status"] for e in again.events if e["type"] == "turn/end"][-1] == "failed"


def test_out_names_the_file_and_a_missing_folder_writes_nothing(
    tmp_path: Path, imported: ImportedSession
) -> None:
    out = tmp_path / "exported.jsonl"
    done = WRITER.export(export_input(imported), tmp_path / "unused", out)
    assert done.path == out
    assert not (tmp_path / "unused").exists()
    before = out.read_bytes()
    with pytest.raises(TargetExists, match="exists already"):  # code "exists"
        WRITER.export(export_input(imported), tmp_path, out)
    assert out.read_bytes() == before
    missing = tmp_path / "nowhere" / "x.jsonl"
    with pytest.raises(FormatError, match="does not exist"):
        WRITER.export(export_input(imported), tmp_path, missing)
    assert not missing.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exported.jsonl", "pi"]


def test_a_source_changed_since_the_import_is_refused(
    tmp_path: Path, imported: ImportedSession
) -> None:
    source = Path(imported.source.path)
    original = lines(source)
    # another prompt where the first one was: same line numbers, other entry
    changed = orjson.loads(original[3])
    changed["id"] = "99999999"
    source.write_bytes(b"\n".join([*original[:3], orjson.dumps(changed), *original[4:]]) + b"\n")
    with pytest.raises(FormatError) as caught:
        WRITER.export(export_input(imported), tmp_path / "out", None)
    assert caught.value.line == 4
    source.write_bytes(b"\n".join(original[:5]) + b"\n")  # cut short
    with pytest.raises(FormatError, match="no entry on line"):
        WRITER.export(export_input(imported), tmp_path / "out", None)
    source.unlink()
    with pytest.raises(FormatError, match="cannot be read"):
        WRITER.export(export_input(imported), tmp_path / "out", None)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))


def test_a_v1_source_keeps_its_version_and_new_entries_get_no_ids(tmp_path: Path) -> None:
    s = PiSession("11111111-1111-4111-8111-111111111111", version=1)
    s.user("one")
    s.assistant("first")
    [session] = read(s.write(tmp_path / "pi"))
    events = forked_with_new_turns(session, last_turn_end(session.events))
    done = WRITER.export(export_input(session, events), tmp_path / "out", None)
    written = [orjson.loads(line) for line in lines(done.path)]
    assert written[0]["version"] == 1
    assert written[1:3] == [orjson.loads(line) for line in lines(Path(session.source.path))[1:]]
    assert all("id" not in e and "parentId" not in e for e in written[1:])
    assert messages(READER.read(settled(done.path))[0])[-1] == ("assistant", "A demo.")


def test_a_session_made_in_forkwise_alone_is_written_without_a_parent(
    tmp_path: Path, imported: ImportedSession
) -> None:
    events = forked_with_new_turns(imported, 0)[1:]  # no seed, no history/fork
    for n, e in enumerate(events, start=1):
        e["seq"] = n
    done = WRITER.export(export_input(imported, events), tmp_path, None)
    header = orjson.loads(lines(done.path)[0])
    assert "parentSession" not in header
    first = orjson.loads(lines(done.path)[1])
    assert first["parentId"] is None
    assert messages(READER.read(settled(done.path))[0])[0] == ("user", "Try again, shorter")


def test_two_exports_of_one_session_are_two_pi_sessions(
    tmp_path: Path, imported: ImportedSession
) -> None:
    a = WRITER.export(export_input(imported), tmp_path, None)
    b = WRITER.export(export_input(imported), tmp_path, None)
    assert a.id != b.id
    assert a.path != b.path
    assert lines(a.path)[1:] == lines(b.path)[1:]
    assert time.time() - os.stat(a.path).st_mtime < 60


def test_lines_of_another_tools_file_are_written_as_new_pi_entries(
    tmp_path: Path, imported: ImportedSession
) -> None:
    """A session imported from Claude Code or Codex, exported to pi: nothing to copy."""
    claude = SourceRef("claude", str(tmp_path / "claude.jsonl"), "c-1", None)
    events = [
        {**e, "src": {"id": "c-1", "lines": e["src"]["lines"]}} if "src" in e else e
        for e in forked_with_new_turns(imported, last_turn_end(imported.events, before=12))
    ]
    session = export_input(imported, events)
    session = ExportInput(
        session.session_id, session.cwd, session.title, session.created, events, {"c-1": claude}
    )
    done = WRITER.export(session, tmp_path, None)
    header = orjson.loads(lines(done.path)[0])
    assert "parentSession" not in header
    [again] = read(done.path)
    expected = [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in events
        if e["type"] == "message"
    ]
    assert messages(again) == expected
