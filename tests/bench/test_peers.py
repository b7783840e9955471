"""The pi side of `bench --peers`: the same conversation in pi's format, read by pi itself.

Needs `node` and the npm registry (pi is installed into a cache folder on first use), as
the Codex format tests do; it fails, not skips, when pi cannot be installed."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import orjson

from forkwise.core.bench.peers import PI_SCRIPT, install_pi, pi_entries, write_pi_session
from forkwise.core.bench.synth import session_lines


def test_pi_lines_carry_the_same_conversation() -> None:
    ours = [orjson.loads(x) for x in session_lines(random.Random(3), "s", 400)]
    pi = [orjson.loads(x) for x in pi_entries(session_lines(random.Random(3), "s", 400))]
    assert (pi[0]["type"], pi[0]["id"]) == ("session", "s")
    messages = [e["message"] for e in pi[1:] if e["type"] == "message"]
    want = [
        (e["role"] if e["type"] == "message" else "toolResult")
        for e in ours[1:]
        if e["type"] in ("message", "tool/result")
    ]
    assert [m["role"] for m in messages] == want
    calls = [
        c["id"]
        for m in messages
        if m["role"] == "assistant"
        for c in m["content"]
        if c["type"] == "toolCall"
    ]
    assert calls == [m["toolCallId"] for m in messages if m["role"] == "toolResult"]
    assert calls  # the synthetic conversation has tool calls
    # one chain: every entry's parent is the entry before it
    assert [e["parentId"] for e in pi[1:]] == [None, *(e["id"] for e in pi[1:-1])]


def test_pi_builds_the_context_of_the_written_session(tmp_path: Path) -> None:
    """pi's own library opens the file and its context holds every message written."""
    path = tmp_path / "pi.jsonl"
    write_pi_session(path, session_lines(random.Random(5), "s", 300))
    script = (
        PI_SCRIPT + "console.log(JSON.stringify(SessionManager.open(a).buildSessionContext()"
        ".messages.map((m) => m.role)));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, "--", install_pi().as_uri(), "-", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    written = [
        e["message"]["role"]
        for e in map(orjson.loads, path.read_bytes().splitlines()[1:])
        if e["type"] == "message"
    ]
    assert orjson.loads(done.stdout) == written
