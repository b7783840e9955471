"""Builders for session logs in the core tests: store drafts, events and whole files.

Drafts are what `SessionStore.append` takes (`{"type": …, fields…}`); `events_of` turns a
list of drafts into numbered, validated events (a seed for `create`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.events import Event

Draft = dict[str, Any]
TS = "2026-01-01T00:00:00.000Z"


@dataclass(frozen=True)
class Refused:
    code: str


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What fn returned, or Refused(code) for the ForkwiseError it raised."""
    try:
        return fn(*args, **kwargs)
    except ForkwiseError as exc:
        return Refused(exc.code)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def message(turn: str, role: str, mid: str, body: str, *extra: Mapping[str, Any]) -> Draft:
    return {"type": "message", "turn": turn, "id": mid, "role": role, "parts": [text(body), *extra]}


def tool_call(call: str, name: str = "read", args: object = None) -> dict[str, Any]:
    return {"type": "tool_call", "id": call, "name": name, "args": args or {"path": "a.txt"}}


def turn(
    tid: str,
    question: str = "what is in the file",
    answer: str = "it says hello",
    status: str = "completed",
    *,
    tool: bool = False,
    approval: bool = False,
    open_: bool = False,
) -> list[Draft]:
    """One turn: user message, optionally a step with an (approved) tool call, the answer."""
    out: list[Draft] = [
        {"type": "turn/start", "turn": tid},
        message(tid, "user", f"user:{tid}:q", question),
    ]
    if tool:
        call = f"call-{tid}"
        out += [
            {"type": "step/start", "turn": tid, "step": f"{tid}.s1"},
            message(tid, "assistant", f"assistant:{tid}:c", "let me look", tool_call(call)),
        ]
        if approval:
            out += [
                {
                    "type": "approval/request",
                    "turn": tid,
                    "approval": f"ap-{tid}",
                    "call": call,
                    "tool": "read",
                },
                {
                    "type": "approval/resolve",
                    "turn": tid,
                    "approval": f"ap-{tid}",
                    "decision": "allow",
                },
            ]
        out += [
            {"type": "tool/result", "turn": tid, "call": call, "tool": "read", "output": "hello"},
            {"type": "step/end", "turn": tid, "step": f"{tid}.s1"},
        ]
    out.append(message(tid, "assistant", f"assistant:{tid}:a", answer))
    if not open_:
        out.append({"type": "turn/end", "turn": tid, "status": status})
    return out


def waiting(tid: str, question: str = "what is in the file") -> list[Draft]:
    """A turn left open waiting for an approval: it stays open when a host serves the
    session (a turn a crash left open would be closed as interrupted)."""
    call = f"call-{tid}"
    return [
        {"type": "turn/start", "turn": tid},
        message(tid, "user", f"user:{tid}:q", question),
        {"type": "step/start", "turn": tid, "step": f"{tid}.s1"},
        message(tid, "assistant", f"assistant:{tid}:c", "let me look", tool_call(call)),
        {"type": "approval/request", "turn": tid, "approval": f"ap-{tid}", "call": call,
         "tool": "read"},
    ]


def events_of(drafts: Iterable[Mapping[str, Any]], start: int = 1) -> list[Event]:
    """Number `drafts` from `start` and build validated events (fixed timestamp)."""
    out = []
    for seq, draft in enumerate(drafts, start=start):
        payload = {k: v for k, v in draft.items() if k != "type"}
        out.append(Event.build(seq, str(draft["type"]), payload, ts=TS))
    return out


def header_line(sid: str, **fields: Any) -> bytes:
    record = {
        "type": "session",
        "version": 1,
        "id": sid,
        "created": TS,
        "cwd": "/work/project",
        "parentSession": None,
        "seedLength": 0,
        "meta": {},
    }
    record.update(fields)
    return orjson.dumps(record)


def file_bytes(sid: str, events: Sequence[Event], **header: Any) -> bytes:
    """A session file as the JSONL backend writes it."""
    return b"\n".join([header_line(sid, **header), *(e.encode() for e in events)]) + b"\n"


def tree(root: Path, skip: Iterable[str] = ("writer.lock",)) -> dict[str, bytes]:
    """Every file under `root` (relative path → bytes), to compare a store before/after."""
    skipped = set(skip)
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            if rel not in skipped:
                out[rel] = path.read_bytes()
    return out


SAMPLE: list[Draft] = [
    {"type": "session/title", "title": "sample"},
    {"type": "model/select", "provider": "offline", "model": "echo-1", "reasoning": "low"},
    *turn("t1", "read a.txt", "it says hello", tool=True, approval=True),
    {"type": "plugin/notes/pin", "note": "keep", "nested": {"a": [1, 2, {"b": None}]}},
    *turn("t2", "and b.txt", "also hello", status="cancelled"),
    {"type": "context/summary", "text": "they read files", "through": 10},
    *turn("t3", "thanks", "you are welcome"),
]
