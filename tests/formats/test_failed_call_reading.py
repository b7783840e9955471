"""A failed tool call reads as failed wherever a session is read (one rule in
forkwise.core.reading): the transcript's entries and Compare, for a call an importer
marked failed (`error: true`) and one the runtime marked (`isError`)."""

from __future__ import annotations

from pathlib import Path

from claude_checks import stored
from claude_fixtures import Transcript

from forkwise.core.formats.claude import READER
from forkwise.core.reading.compare import compare
from forkwise.core.reading.entries import TOOL, build
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore


def _imported_failed_call(tmp_path: Path) -> list[dict[str, object]]:
    t = Transcript("0f6d1c2a-3b4e-4d5f-8a9b-0c1d2e3f4a5b")
    t.user("run the tests")
    call_entry = t.assistant([{"type": "tool_use", "id": "toolu_01fail", "name": "Bash",
                               "input": {"command": "pytest -q"}}], stop="tool_use")[-1]
    t.tool_result("toolu_01fail", "2 failed", call_entry, is_error=True)
    t.assistant([{"type": "text", "text": "Two tests fail."}])
    sessions = READER.read(t.write(tmp_path / "src" / "s.jsonl"))
    stored(sessions, tmp_path / "store")  # stored and read back from disk
    store = SessionStore(JsonlBackend(tmp_path / "store", writable=False))
    return [e.to_record() for e in store.get(sessions[0].id).events]


def test_an_imported_failed_call_is_failed_in_the_transcript_and_in_compare(
        tmp_path: Path) -> None:
    events = _imported_failed_call(tmp_path)
    results = [e for e in events if e["type"] == "tool/result"]
    assert results
    assert results[0].get("error") is True
    assert "isError" not in results[0]
    tool_entries = [e for e in build(events).entries if e.kind == TOOL]
    assert [e.data["is_error"] for e in tool_entries] == [True]
    # compared with a fork cut before the call, the call's side reads "failed"
    cut = next(n for n, e in enumerate(events) if e["type"] == "turn/start")
    rows = compare(events, events[:cut]).rows
    lines = [text for a, _b in rows if a for _kind, text in a.lines]
    assert any(text.startswith("  → failed: ") and "2 failed" in text for text in lines), lines
    assert not any(text.startswith("  → result: ") for text in lines), lines


def test_a_runtime_failed_call_is_failed_in_compare_too() -> None:
    events: list[dict[str, object]] = [
        {"seq": 1, "type": "turn/start", "ts": "t", "turn": "t1"},
        {"seq": 2, "type": "message", "ts": "t", "turn": "t1", "id": "user:q:1", "role": "user",
         "parts": [{"type": "text", "text": "read it"}]},
        {"seq": 3, "type": "message", "ts": "t", "turn": "t1", "id": "assistant:a:1",
         "role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "read_file",
                                         "args": {"path": "x"}}]},
        {"seq": 4, "type": "tool/result", "ts": "t", "turn": "t1", "call": "c1",
         "output": "no such file", "isError": True},
        {"seq": 5, "type": "turn/end", "ts": "t", "turn": "t1", "status": "completed"},
    ]
    assert [e.data["is_error"] for e in build(events).entries if e.kind == TOOL] == [True]
    lines = [text for a, _b in compare(events, []).rows if a for _k, text in a.lines]
    assert "  → failed: no such file" in lines
