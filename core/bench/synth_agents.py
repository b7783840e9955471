"""Synthetic Gemini CLI and OpenCode histories for the import figures, shaped as the tools
write them: Gemini CLI session files (a metadata line, each message appended whole and
again when its tool calls finish, `$set` after every message, a `$rewindTo` in every
fifth session) and an OpenCode database (WAL; `session`, `message`, `part` as OpenCode
1.18 makes them; every tenth session a fork copying its predecessor's first turns)."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path
from typing import Any

import orjson

_CWD = "/work/proj"
_OUTPUT = "\n".join(f"tests/test_mod_{i}.py::test_case PASSED" for i in range(40))


def _uuid(*key: object) -> str:
    h = hashlib.sha256(repr(key).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _iso(ms: int) -> str:
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-03-02T{h % 24:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def _gemini_session(n: int, turns: int, rng: random.Random) -> bytes:
    sid = _uuid("gemini", n)
    clock = [n * 1000]

    def tick() -> str:
        clock[0] += rng.randint(200, 4000)
        return _iso(clock[0])

    lines: list[Any] = [
        {
            "sessionId": sid,
            "projectHash": hashlib.sha256(_CWD.encode()).hexdigest(),
            "startTime": tick(),
            "lastUpdated": tick(),
            "kind": "main",
        }
    ]
    rewind_at = turns // 2 if n % 5 == 0 else -1
    for t in range(turns):
        user = {
            "id": _uuid(sid, t, "u"),
            "timestamp": tick(),
            "type": "user",
            "content": [{"text": f"prompt {t}: please look at the code and fix the test"}],
        }
        ts = tick()
        call = {
            "id": f"run_shell_command-{n}-{t}",
            "name": "run_shell_command",
            "args": {"command": "pytest -q"},
            "status": "executing",
            "timestamp": ts,
        }
        answer = {
            "id": _uuid(sid, t, "g"),
            "timestamp": ts,
            "type": "gemini",
            "content": "",
            "thoughts": [
                {"subject": "Looking", "description": "at the failing test", "timestamp": ts}
            ],
            "toolCalls": [call],
            "model": "gemini-2.5-pro",
            "tokens": None,
        }
        done = {
            **call,
            "status": "success",
            "result": [
                {
                    "functionResponse": {
                        "id": call["id"],
                        "name": call["name"],
                        "response": {"output": _OUTPUT},
                    }
                }
            ],
            "resultDisplay": _OUTPUT,
        }
        final = {
            "id": _uuid(sid, t, "f"),
            "timestamp": tick(),
            "type": "gemini",
            "content": "Fixed it: the fixture was stale.",
            "thoughts": [],
            "tokens": {
                "input": 900,
                "output": 40,
                "cached": 0,
                "thoughts": 10,
                "tool": 0,
                "total": 950,
            },
            "model": "gemini-2.5-pro",
        }
        for record in (user, answer, {**answer, "toolCalls": [done]}, final):
            lines += [record, {"$set": {"lastUpdated": tick()}}]
        if t == rewind_at:
            lines.append({"$rewindTo": user["id"]})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def gemini_home(home: Path, megabytes: float) -> list[Path]:
    """Session files under `home/.gemini/tmp/proj/chats` until they hold about `megabytes`
    MB; the files, sorted."""
    folder = home / ".gemini" / "tmp" / "proj"
    chats = folder / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(_CWD)
    rng = random.Random(7)
    total, n, files = 0, 0, []
    while total < megabytes * 1_000_000:
        n += 1
        data = _gemini_session(n, 30, rng)
        path = chats / f"session-2026-03-02T10-{n % 60:02d}-{_uuid('gemini', n)[:8]}.jsonl"
        path.write_bytes(data)
        files.append(path)
        total += len(data)
    return sorted(files)


_SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
  slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  revert text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
"""


def opencode_db(path: Path, megabytes: float) -> int:
    """An OpenCode database at `path` holding about `megabytes` MB of message and part data;
    returns the bytes of that data."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)
    conn.execute("INSERT INTO project VALUES ('global', '/', 0, 0, '[]')")
    total, n, counter = 0, 0, [0]
    previous: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []

    def new_id(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}_{counter[0]:012x}synthetic{counter[0]:05d}"[:30]

    conn.execute("BEGIN")
    while total < megabytes * 1_000_000:
        n += 1
        sid = new_id("ses")
        start = 1_772_442_000_000 + n * 10_000_000
        fork = n % 10 == 0 and previous
        title = f"Session {n - 1} (fork #1)" if fork else f"Session {n}"
        conn.execute(
            "INSERT INTO session VALUES (?, 'global', NULL, 'calm-river', ?, ?, '1.18.33',"
            " NULL, ?, ?, NULL)",
            (sid, _CWD, title, start, start),
        )
        messages = list(previous[:8]) if fork else []
        clock = start
        for t in range(30):
            clock += 5000
            user = {
                "role": "user",
                "time": {"created": clock},
                "agent": "build",
                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
            }
            answer = {
                "parentID": "",
                "role": "assistant",
                "mode": "build",
                "agent": "build",
                "path": {"cwd": _CWD, "root": "/"},
                "cost": 0.004,
                "tokens": {
                    "total": 950,
                    "input": 900,
                    "output": 40,
                    "reasoning": 10,
                    "cache": {"write": 0, "read": 0},
                },
                "modelID": "claude-sonnet-4-5",
                "providerID": "anthropic",
                "time": {"created": clock + 100, "completed": clock + 900},
                "finish": "stop",
            }
            messages.append((user, [{"type": "text", "text": f"prompt {t}: fix the failing test"}]))
            messages.append(
                (
                    answer,
                    [
                        {"type": "step-start"},
                        {
                            "type": "reasoning",
                            "text": "Looking at the failing test",
                            "time": {"start": clock + 110, "end": clock + 120},
                        },
                        {
                            "type": "tool",
                            "tool": "bash",
                            "callID": f"call_{n}_{t}",
                            "state": {
                                "status": "completed",
                                "input": {"command": "pytest -q"},
                                "output": _OUTPUT,
                                "title": "pytest -q",
                                "metadata": {},
                                "time": {"start": clock + 130, "end": clock + 600},
                            },
                        },
                        {
                            "type": "text",
                            "text": "Fixed it: the fixture was stale.",
                            "time": {"start": clock + 700, "end": clock + 800},
                        },
                        {
                            "reason": "stop",
                            "type": "step-finish",
                            "tokens": answer["tokens"],
                            "cost": 0.004,
                        },
                    ],
                )
            )
        last_user = ""
        for record, parts in messages:
            mid = new_id("msg")
            info = record if record["role"] == "user" else {**record, "parentID": last_user}
            if record["role"] == "user":
                last_user = mid
            data = orjson.dumps(info).decode()
            created = info["time"]["created"]
            conn.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, created, created, data)
            )
            total += len(data)
            for part in parts:
                body = orjson.dumps(part).decode()
                conn.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (new_id("prt"), mid, sid, created, created, body),
                )
                total += len(body)
        previous = messages
    conn.execute("COMMIT")
    conn.close()
    return total
