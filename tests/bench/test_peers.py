"""The peers of `bench --peers`: the same conversation in pi's format and as Codex rollouts,
read by pi's library and by `codex app-server` themselves.

Needs `node` and the npm registry (pi and Codex are installed into a cache folder on first
use), as the Codex format tests do; it fails, not skips, when they cannot be installed."""

from __future__ import annotations

import random
import subprocess
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.app_server import AppServer, install_codex
from forkwise.core.bench.codex_peer import (
    START,
    CodexRunner,
    drop_state,
    thread_id,
    write_codex_home,
    write_rollout,
)
from forkwise.core.bench.peers import (
    PI_SCRIPT,
    cache_dir,
    install_pi,
    pi_entries,
    write_pi_session,
)
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


def test_codex_lists_forks_and_reads_the_written_conversations(tmp_path: Path) -> None:
    """The Codex side: the rollouts Forkwise's writer makes of the synthetic conversations
    are listed, forked, resumed and read by the real `codex app-server` (the runner checks
    every answer: the number of threads, a new id, the number of turns)."""
    home = write_codex_home(tmp_path / "codex", sessions=3, per=120)
    runner = CodexRunner(install_codex(cache_dir()), tmp_path / "app-server.log")
    assert runner.list(home, 3) > 0
    assert runner.list(home, 3, db_only=True) > 0
    drop_state(home)
    assert not list(home.glob("state_*.sqlite"))
    assert runner.list(home, 3) > 0
    with pytest.raises(RuntimeError, match="listed 3 threads, wanted 4"):
        runner.list(home, 4)

    lines = list(session_lines(random.Random(5), "s", 300))
    big = write_rollout(home, iter(lines), START - timedelta(days=1))
    turns = sum(1 for raw in lines if b'"turn/start"' in raw)
    assert runner.read(home, thread_id(big), turns) > 0
    assert runner.resume(home, thread_id(big)) > 0
    assert runner.fork(home, thread_id(big)) > 0
    assert len(list((home / "sessions").rglob("rollout-*.jsonl"))) == 5

    server = AppServer(runner.binary, home, runner.log)
    try:
        thread = server.request("thread/read", {"threadId": thread_id(big), "includeTurns": True})
    finally:
        server.close()
    said = [
        (item["type"], item["content"][0]["text"] if "content" in item else item["text"])
        for turn in thread["thread"]["turns"]
        for item in turn["items"]
        if item["type"] in ("userMessage", "agentMessage")
    ]
    written = [orjson.loads(raw) for raw in lines[1:]]
    want = [
        ("userMessage" if e["role"] == "user" else "agentMessage", part["text"])
        for e in written
        if e["type"] == "message"
        for part in e["parts"]
        if part["type"] == "text"
    ]
    assert said == want
