"""An exported transcript read by an independent parser of Claude Code files:
claude-code-log 1.7.0 (PyPI), which validates every entry against its own models and
rebuilds the conversation DAG (forks, compaction, tool-result stitching) as Claude Code's
loader does. It is installed once, pinned, into a cache folder outside the checkout; a
failure to install fails the test rather than skipping it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_checks import export_input
from claude_fixtures import SID, Transcript, forkwise_turn, rewound, rich_transcript, write_old

from forkwise.core.formats.claude import READER, WRITER

VERSION = "1.7.0"
PROBE = r"""
import json, sys
from pathlib import Path
from claude_code_log.converter import load_transcript
from claude_code_log.dag import build_dag_from_entries
entries = load_transcript(Path(sys.argv[1]), silent=False)
tree = build_dag_from_entries(entries)
out = {"entries": [], "lines": {}}
for e in entries:
    d = e.model_dump(mode="json", exclude_none=True)
    out["entries"].append({k: d.get(k) for k in ("type", "uuid", "sessionId", "message")})
for sid, line in tree.sessions.items():
    out["lines"][sid] = {"uuids": line.uuids, "branch": line.is_branch}
print("JSON:" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def ccl_python() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "forkwise-tests" / "pypi" / f"claude-code-log-{VERSION}"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import claude_code_log.dag"]
    if (
        python.exists()
        and subprocess.run(check, capture_output=True, timeout=60, check=False).returncode == 0
    ):
        return python
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [str(python), "-m", "pip", "install", "-q", f"claude-code-log=={VERSION}"],
        check,
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            pytest.fail(f"cannot install claude-code-log {VERSION}: {done.stderr[-2000:]}")
    return python


def parse(python: Path, path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    chatter = [
        line for line in done.stdout.splitlines() if not line.startswith(("JSON:", "Processing "))
    ]
    assert chatter == [], "claude-code-log warned about the file"
    assert "Warning" not in done.stderr
    payload = done.stdout.rsplit("JSON:", 1)[1]
    result: dict[str, Any] = orjson.loads(payload)
    return result


def texts(entries: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in entries:
        message = e.get("message") or {}
        for block in message.get("content") or ():
            if block.get("type") == "text" and not block["text"].startswith("This session is"):
                out.append(block["text"])
    return out


def test_exported_fork_reads_as_one_line_in_claude_code_log(
    tmp_path: Path, ccl_python: Path
) -> None:
    source = write_old(rich_transcript(), tmp_path / "src")
    main = READER.read(source)[0]
    done = WRITER.export(export_input(main, forkwise_turn(main)), tmp_path / "claude", None)
    parsed = parse(ccl_python, done.path)
    entries = parsed["entries"]
    nodes = [orjson.loads(raw) for raw in done.path.read_bytes().splitlines()]
    nodes = [n for n in nodes if "parentUuid" in n]
    # every entry of the tree was accepted, with the new session id
    assert [e["uuid"] for e in entries] == [n["uuid"] for n in nodes]
    assert {e["sessionId"] for e in entries} == {done.id}
    # one line through the compaction to the turn added in Forkwise
    assert list(parsed["lines"]) == [done.id]
    assert parsed["lines"][done.id]["uuids"] == [n["uuid"] for n in nodes]
    assert texts(entries) == [
        "list the files",
        "I will run ls.",
        "There are two files.",
        "and now?",
        "Nothing else.",
        "count the lines",
        "Counting.",
        "There are 42 lines.",
    ]
    tools = [
        b
        for e in entries
        for b in (e.get("message") or {}).get("content") or ()
        if b.get("type") in ("tool_use", "tool_result")
    ]
    assert [b["type"] for b in tools] == ["tool_use", "tool_result", "tool_use", "tool_result"]
    assert tools[2]["id"] == tools[3]["tool_use_id"]


def test_exported_branch_has_no_fork_left_in_claude_code_log(
    tmp_path: Path, ccl_python: Path
) -> None:
    t = Transcript(SID)
    rewound(t)
    source = write_old(t, tmp_path / "src")
    original = parse(ccl_python, source)
    assert any(line["branch"] for line in original["lines"].values())  # it sees the rewind
    branch = READER.read(source)[1]
    done = WRITER.export(export_input(branch), tmp_path / "claude", None)
    parsed = parse(ccl_python, done.path)
    assert [line["branch"] for line in parsed["lines"].values()] == [False]
    assert texts(parsed["entries"]) == [m[1] for m in _convo(branch)]


def _convo(session: Any) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]
