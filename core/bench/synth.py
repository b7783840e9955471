"""Deterministic synthetic stores in the on-disk format, written directly (fast to make).

The event mix follows what agent sessions look like: a user question, one to three steps
with assistant messages of varying length, tool calls with results, now and then a model
change or a plugin note, and a few forks.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.store.session import FORMAT_VERSION

WORDS = [
    "the",
    "session",
    "fork",
    "turn",
    "tool",
    "result",
    "model",
    "agent",
    "branch",
    "log",
    "replay",
    "store",
    "answer",
    "question",
    "file",
    "path",
    "error",
    "retry",
    "context",
    "summary",
    "plan",
    "step",
    "check",
    "build",
    "test",
    "value",
    "line",
    "event",
]


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def session_lines(rng: random.Random, session_id: str, n_events: int) -> Iterator[bytes]:
    """Yield the header and about `n_events` events, ending with a completed turn."""
    yield orjson.dumps(
        {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": session_id,
            "created": "2026-01-01T00:00:00.000Z",
            "cwd": "/work/demo",
            "parentSession": None,
            "seedLength": 0,
            "meta": {},
        }
    )
    seq = 0
    turn_no = 0

    def ev(etype: str, **fields: Any) -> bytes:
        nonlocal seq
        seq += 1
        ts = f"2026-01-01T00:{(seq // 60) % 60:02d}:{seq % 60:02d}.000Z"
        return orjson.dumps({"seq": seq, "type": etype, "ts": ts, **fields})

    yield ev("session/title", title=_text(rng, 2, 5))
    yield ev("model/select", provider="offline", model="offline-echo")
    while seq < n_events - 1:
        turn_no += 1
        turn = f"turn:{turn_no}"
        yield ev("turn/start", turn=turn)
        yield ev(
            "message",
            id=f"user:q{turn_no}:{rng.getrandbits(16):04x}",
            role="user",
            turn=turn,
            parts=[{"type": "text", "text": _text(rng, 5, 60)}],
        )
        for step in range(rng.randint(1, 3)):
            sid = f"step:{step}"
            yield ev("step/start", turn=turn, step=sid)
            parts: list[dict[str, Any]] = [{"type": "text", "text": _text(rng, 10, 400)}]
            call = None
            if rng.random() < 0.4:
                call = f"call:{turn_no}:{step}"
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call,
                        "name": "read_file",
                        "args": {"path": f"src/{rng.choice(WORDS)}.py"},
                    }
                )
            yield ev(
                "message",
                id=f"assistant:a{turn_no}-{step}:{rng.getrandbits(16):04x}",
                role="assistant",
                turn=turn,
                parts=parts,
            )
            if call:
                yield ev(
                    "tool/result",
                    turn=turn,
                    call=call,
                    tool="read_file",
                    output=_text(rng, 20, 300),
                )
            yield ev("step/end", turn=turn, step=sid)
        yield ev("turn/end", turn=turn, status="completed")
        if rng.random() < 0.05:
            yield ev("plugin/notes/pin", note=_text(rng, 2, 8))


def write_store(root: Path, sessions: int, events_per_session: int, seed: int = 7) -> Path:
    """A store of `sessions` logs of about `events_per_session` events each."""
    rng = random.Random(seed)
    sdir = root / "sessions"
    sdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for i in range(sessions):
        sid = f"bench-{i:06d}"
        data = b"\n".join(session_lines(rng, sid, events_per_session)) + b"\n"
        fd = os.open(sdir / f"{sid}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return root
