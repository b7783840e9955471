"""pi tool calls whose ids repeat (some providers number calls per reply): each result
pairs with the call it answers, as pi pairs them (the latest call of that id still
waiting for its result) — through the real import verb on a pi file on disk."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
from pi_fixtures import PiSession, settled

from forkwise.core.cli import main as cli
from forkwise.core.reading.entries import build


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def test_repeated_call_ids_pair_each_result_with_its_own_call(tmp_path: Path) -> None:
    s = PiSession("0193a1b2-0000-7000-8000-0000000000c1")
    s.user("read both files")
    s.assistant(calls=(("call_0", "read", {"path": "a.txt"}),))
    s.tool_result("call_0", "read", "contents of a")
    s.assistant(calls=(("call_0", "read", {"path": "b.txt"}),))
    s.tool_result("call_0", "read", "contents of b")
    s.assistant("Both read.")
    s.user("and list the folder")
    s.assistant(calls=(("call_0", "bash", {"command": "ls"}), ("call_1", "read", {"path": "c"})))
    s.tool_result("call_0", "bash", "a.txt b.txt c")
    s.tool_result("call_1", "read", "contents of c")
    s.assistant("Listed.")
    path = settled(s.write(tmp_path / "sessions" / "--work--"))
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "pi", str(path), "--store", str(store))
    assert code == 0, report
    code, shown = run_json("sessions", "show", report["imported"][0], "--store", str(store))
    assert code == 0, shown
    events = shown["events"]
    calls = {
        p["id"]: p
        for e in events
        if e["type"] == "message"
        for p in e["parts"]
        if p["type"] == "tool_call"
    }
    assert len(calls) == 4  # one per toolCall block of the file, each its own id
    results = [e for e in events if e["type"] == "tool/result"]
    answered = [(calls[r["call"]]["name"], calls[r["call"]]["args"], r["output"]) for r in results]
    assert answered == [
        ("read", {"path": "a.txt"}, "contents of a"),
        ("read", {"path": "b.txt"}, "contents of b"),
        ("bash", {"command": "ls"}, "a.txt b.txt c"),
        ("read", {"path": "c"}, "contents of c"),
    ]
    # pi's own id is kept beside the one the session gives a repeated one
    assert sorted(p.get("callId", p["id"]) for p in calls.values()) == [
        "call_0", "call_0", "call_0", "call_1"
    ]
    # the transcript shows four calls, each with its own result
    tools = [e for e in build(events).entries if e.kind == "tool"]
    assert [(t.data["args"], t.data.get("result")) for t in tools] == [
        ({"path": "a.txt"}, "contents of a"),
        ({"path": "b.txt"}, "contents of b"),
        ({"command": "ls"}, "a.txt b.txt c"),
        ({"path": "c"}, "contents of c"),
    ]
