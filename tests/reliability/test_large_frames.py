"""A session holding one event larger than a request may be (16 MB) is read through a
running host like any other: over its store socket (`host.sock`) and over tcp. The host
sent such a frame and its own client refused it ("Separator is not found")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from host_process import tcp_host

from forkwise.core.host.wire_codec import MAX_MESSAGE
from tests.reliability.conftest import child_env

TIMEOUT = 120.0


def big_session(store: Path, size: int) -> str:
    """A store holding session `big`: one turn whose reply is `size` bytes of text."""
    text = "w" * size
    lines = [
        {"type": "session", "version": 1, "id": "big", "created": "2026-01-01T00:00:00Z",
         "cwd": "", "parentSession": None, "seedLength": 0, "meta": {}},
        {"seq": 1, "type": "turn/start", "ts": "2026-01-01T00:00:01Z", "turn": "turn:1"},
        {"seq": 2, "type": "message", "ts": "2026-01-01T00:00:02Z", "turn": "turn:1",
         "id": "user:hi:0001", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
        {"seq": 3, "type": "message", "ts": "2026-01-01T00:00:03Z", "turn": "turn:1",
         "id": "assistant:big:0002", "role": "assistant",
         "parts": [{"type": "text", "text": text}]},
        {"seq": 4, "type": "turn/end", "ts": "2026-01-01T00:00:04Z", "turn": "turn:1",
         "status": "completed"},
    ]  # fmt: skip
    (store / "sessions").mkdir(parents=True)
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    (store / "sessions" / "big.jsonl").write_bytes(data)
    return text


def show(*argv: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", "sessions", "show", "big", *argv, "--json"],
        capture_output=True, timeout=TIMEOUT, env=child_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    shown: dict[str, object] = orjson.loads(done.stdout)
    return shown


def test_an_event_over_16_mb_is_read_through_a_running_host(store: Path) -> None:
    text = big_session(store, MAX_MESSAGE + (1 << 20))
    token = store.parent / "token"
    token.write_text("large-frames-token\n")
    os.chmod(token, 0o600)
    with tcp_host(store, token, child_env()) as (_, address):
        for argv in (("--store", str(store)), ("--connect", address, "--token-file", str(token))):
            shown = show(*argv)
            events = shown["events"]
            assert isinstance(events, list)
            assert events[2]["parts"][0]["text"] == text, argv
