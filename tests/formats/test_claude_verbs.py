"""Claude Code sessions through the real verbs: `forkwise sessions import` of a projects
folder (a rewind, a --fork-session file, a subagent file), an import again (unchanged,
then grown), a fork continued with the offline model, and `sessions export --to claude`
read back."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_checks import convo
from claude_fixtures import OTHER, SID, Transcript, project_file, rewound

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import source_session_id
from forkwise.core.formats.claude import READER

CHILD = "33333333-3333-4333-8333-333333333333"


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def old(path: Path) -> Path:
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


@pytest.fixture
def claude_home(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "claude"
    t = Transcript(SID)
    ids = rewound(t)
    main = old(t.write(project_file(root, t)))
    parent = Transcript(OTHER)
    parent.exchange("shared one", "answer one")
    parent.tool_turn("shared two", "pwd", "/home", "You are home.")
    old(parent.write(project_file(root, parent)))
    child = Transcript(CHILD, start=parent.clock)
    for entry in parent.entries:
        if "uuid" in entry:  # --fork-session (2.0) copies the entries, the old sessionId kept
            child.entries.append(dict(entry))
            child.last = entry["uuid"]
    child.exchange("only in the child", "child answer")
    old(child.write(project_file(root, child)))
    agent = Transcript(OTHER, sidechain=True, agent_id="beef01")
    agent.user("Look around", parent=None)
    agent.assistant([{"type": "text", "text": "Nothing here."}])
    old(agent.write(project_file(root, parent).parent / "agent-beef01.jsonl"))
    return {"root": root, "main": main, "old_prompt": ids["old"], "t": t}


def test_import_fork_continue_and_export_through_the_verbs(
    tmp_path: Path, claude_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "claude", str(claude_home["root"]),
                            "--store", store)  # fmt: skip
    assert code == 0, report
    branch = source_session_id("claude", SID, claude_home["old_prompt"])
    expected = {f"claude-{SID}", branch, f"claude-{OTHER}", f"claude-{CHILD}",
                source_session_id("claude", OTHER, "beef01")}  # fmt: skip
    assert set(report["imported"]) == expected
    assert report["failed"] == []
    assert "usage" not in report["unmapped"]  # mapped to `usage` events
    code, rows = run_json("sessions", "list", "--store", store)
    by_id = {r["id"]: r for r in rows}
    assert (by_id[branch]["parentSession"], by_id[branch]["relation"]) == (f"claude-{SID}", "fork")
    assert by_id[branch]["seedLength"] > 0  # the first turn is stored once, in the main line
    assert by_id[f"claude-{CHILD}"]["parentSession"] == f"claude-{OTHER}"
    assert by_id[f"claude-{CHILD}"]["seedLength"] > 0
    sub = by_id[source_session_id("claude", OTHER, "beef01")]
    assert (sub["parentSession"], sub["relation"]) == (f"claude-{OTHER}", "subagent")

    code, again = run_json("sessions", "import", "--from", "claude", str(claude_home["root"]),
                           "--store", store)  # fmt: skip
    assert code == 0
    assert (again["imported"], again["updated"]) == ([], [])
    t: Transcript = claude_home["t"]
    t.exchange("one more", "sure")
    old(t.write(claude_home["main"]))
    code, grown = run_json("sessions", "import", "--from", "claude", str(claude_home["main"]),
                           "--store", store)  # fmt: skip
    assert code == 0, grown
    assert f"claude-{SID}" in grown["updated"]

    code, forked = run_json("sessions", "fork", f"claude-{CHILD}", "--child", "fw-child",
                            "--store", store)  # fmt: skip
    assert code == 0, forked
    code, turn = run_json("sessions", "prompt", "fw-child", "what did we say?", "--store", store)
    assert code == 0, turn
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    code, done = run_json("sessions", "export", "fw-child", "--to", "claude", "--store", store)
    assert code == 0, done
    path = Path(done["path"])
    assert path.parent == tmp_path / "config" / "projects" / "-home-dev-proj-x"
    assert done["resume"] == f"claude --resume {done['id']}"
    (back,) = READER.read(path)
    said = [c[1] for c in convo(back)]
    assert said[:2] == ["shared one", "answer one"]
    assert said[-4:-1] == ["only in the child", "child answer", "what did we say?"]
    assert said[-1] == turn["reply"]
