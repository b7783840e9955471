"""Deterministic synthetic session folders of the agents Forkwise imports, for the import
benchmarks: a Claude Code `projects/` folder and a Codex home.

Claude Code sessions are written the way Claude Code 2.0 writes them: one entry per content
block of a reply (sharing `message.id`), tool results as user entries carrying a
`toolUseResult` copy, a `file-history-snapshot` after each prompt, thinking with its
signature. Session lengths vary (a few turns to a few hundred), and so do tool outputs
(short shell output, edits, file reads of several KB), because the cost of an import is
per line: a tree of big outputs flatters it, a tree of tiny ones is harsher than life. Now
and then a session is rewound (a prompt written again under an earlier entry).
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.bench.synth import WORDS as _WORDS

_CODE = "    return self._items[index] if index < len(self._items) else None  # a line of code"


def _uuid(session: int, n: int) -> str:
    return f"{session:08x}-{n >> 16:04x}-4000-8000-{n & 0xFFFF:012x}"


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _tool(rng: random.Random, call: str, turn: int) -> tuple[dict[str, Any], Any, Any]:
    """A tool call block, the tool_result content and the `toolUseResult` copy, of a
    tool chosen as often as agents use them (reads and shell commands most)."""
    pick = rng.random()
    path = f"/home/dev/project/src/{rng.choice(_WORDS)}_{turn % 40}.py"
    if pick < 0.4:  # Read: a numbered slice of a file
        n = rng.choice((20, 40, 80, 150, 300))
        body = "\n".join(f"{i:>6}\t{_CODE}" for i in range(1, n + 1))
        use = {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": path}}
        detail: dict[str, Any] = {
            "type": "text",
            "file": {"filePath": path, "content": body, "numLines": n},
        }
        return use, body, detail
    if pick < 0.75:  # Bash: a little output, sometimes a lot
        n = rng.choice((1, 3, 8, 20, 60))
        out = "\n".join(f"line {i}: " + _text(rng, 4, 12) for i in range(n))
        use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "pytest -q"}}
        return use, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
    if pick < 0.92:  # Edit: a short answer, the patch in the copy
        old, new = _CODE, _CODE.replace("None", "self._default")
        use = {
            "type": "tool_use",
            "id": call,
            "name": "Edit",
            "input": {"file_path": path, "old_string": old, "new_string": new},
        }
        out = f"The file {path} has been updated."
        patch: list[dict[str, Any]] = [
            {"oldStart": 10, "oldLines": 1, "newStart": 10, "newLines": 1, "lines": [old]}
        ]
        detail = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "structuredPatch": patch,
        }
        return use, out, detail
    use = {"type": "tool_use", "id": call, "name": "Grep", "input": {"pattern": "def read"}}
    found = [f"src/{w}.py" for w in rng.sample(_WORDS, 6)]
    return use, "\n".join(found), {"mode": "files_with_matches", "filenames": found}


class _ClaudeFile:
    """The entries of one Claude Code session file, chained by parentUuid."""

    def __init__(self, number: int, rng: random.Random) -> None:
        self.number = number
        self.rng = rng
        self.sid = _uuid(number, 0)
        self.lines: list[bytes] = []
        self.parent: str | None = None
        self.n = 0
        self.clock = number * 7919
        self.base: dict[str, Any] = {
            "isSidechain": False,
            "userType": "external",
            "cwd": f"/home/dev/project{number % 7}",
            "sessionId": self.sid,
            "version": "2.0.77",
            "gitBranch": "main",
        }

    def put(self, kind: str, body: dict[str, Any], parent: str | None = None) -> str:
        self.n += 1
        self.clock += self.rng.randint(1, 20)
        uuid = _uuid(self.number, self.n)
        c = self.clock
        stamp = f"2026-01-{1 + c // 86400 % 28:02d}T{c // 3600 % 24:02d}:{c // 60 % 60:02d}:"
        entry = {"parentUuid": parent or self.parent, **self.base, "type": kind, **body}
        entry.update(uuid=uuid, timestamp=f"{stamp}{c % 60:02d}.{c % 1000:03d}Z")
        self.lines.append(orjson.dumps(entry))
        self.parent = uuid
        return uuid

    def reply(self, mid: str, blocks: list[dict[str, Any]], stop: str | None) -> None:
        usage = {"input_tokens": 12, "output_tokens": 300, "cache_read_input_tokens": 20_000}
        for n, block in enumerate(blocks):
            message: dict[str, Any] = {"model": "claude-sonnet-4-5-20250929", "id": mid}
            message.update(type="message", role="assistant", content=[block])
            message.update(stop_reason=stop if n == len(blocks) - 1 else None, usage=usage)
            self.put("assistant", {"message": message, "requestId": f"req_{mid[4:]}"})

    def turn(self, t: int, parent: str | None = None) -> None:
        rng = self.rng
        prompt = {"role": "user", "content": f"step {t}: " + _text(rng, 6, 60)}
        self.put("user", {"message": prompt}, parent)
        snap: dict[str, Any] = {"messageId": self.parent, "snapshot": {"trackedFileBackups": {}}}
        self.lines.append(orjson.dumps({"type": "file-history-snapshot", **snap}))
        for step in range(rng.choice((1, 1, 2, 3, 5))):
            mid = f"msg_{self.number:08x}{t:05d}{step:03d}"
            call = f"toolu_{self.number:08x}{t:05d}{step:03d}"
            use, output, detail = _tool(rng, call, t)
            blocks: list[dict[str, Any]] = []
            if rng.random() < 0.5:
                thought = _text(rng, 20, 120)
                blocks.append({"type": "thinking", "thinking": thought, "signature": "E" * 600})
            blocks += [{"type": "text", "text": _text(rng, 3, 40)}, use]
            self.reply(mid, blocks, "tool_use")
            result = {"type": "tool_result", "tool_use_id": call, "content": output}
            body = {"message": {"role": "user", "content": [result]}, "toolUseResult": detail}
            self.put("user", body)
        end = [{"type": "text", "text": _text(rng, 10, 150)}]
        self.reply(f"msg_{self.number:08x}{t:05d}end", end, "end_turn")


def claude_projects(
    root: Path,
    *,
    megabytes: float | None = None,
    sessions: int | None = None,
    turns: int = 30,
    seed: int = 5,
) -> list[Path]:
    """Write Claude Code session files under `root/projects/<project>/` until they hold
    `megabytes` MB or number `sessions`; session lengths are drawn around `turns` turns.
    Returns the files written."""
    rng = random.Random(seed)
    written, files = 0, list[Path]()
    while (megabytes is None or written < megabytes * 1_000_000) and (
        sessions is None or len(files) < sessions
    ):
        f = _ClaudeFile(len(files) + 1, rng)
        count = max(1, min(400, int(rng.lognormvariate(0, 0.9) * turns)))
        rewind_at = rng.randint(1, count) if count > 4 and rng.random() < 0.1 else 0
        for t in range(1, count + 1):
            if t == rewind_at:  # a rewind: a prompt under an earlier entry, left behind
                keep = f.parent
                f.turn(t, parent=_uuid(f.number, max(1, f.n // 2)))
                f.parent = keep
            f.turn(t)
        folder = root / "projects" / f"-home-dev-project{f.number % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{f.sid}.jsonl"
        data = b"\n".join(f.lines) + b"\n"
        path.write_bytes(data)
        written += len(data)
        files.append(path)
    return files


def claude_rewound(root: Path, rewinds: int, seed: int = 7) -> Path:
    """One Claude Code session file rewound at every turn: before each of `rewinds` + 1
    turns of its main line, a prompt was written under the end of the turn before, answered
    and left behind (a rewind). Every branch shares the main line up to where it left it,
    so a store that copies each branch's start holds the main line's turns squared.
    Entry uuids differ from their first digits, as Claude Code's random ones do (a branch's
    id is made from its first entry's). Written under `root/projects/<project>/`; returns
    the file."""
    rng = random.Random(seed)
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/project1",
            "sessionId": sid, "version": "2.0.77", "gitBranch": "main"}  # fmt: skip
    lines: list[bytes] = []
    clock = 0

    def put(parent: str | None, kind: str, body: dict[str, Any]) -> str:
        nonlocal clock
        clock += rng.randint(1, 20)
        me = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        stamp = f"2026-01-{1 + clock // 86400 % 28:02d}T{clock // 3600 % 24:02d}:"
        stamp += f"{clock // 60 % 60:02d}:{clock % 60:02d}.{clock % 1000:03d}Z"
        entry = {"parentUuid": parent, **base, "type": kind, **body, "uuid": me}
        lines.append(orjson.dumps({**entry, "timestamp": stamp}))
        return me

    def turn(parent: str | None, prompt: str, mid: str) -> str:
        asked = put(parent, "user", {"message": {"role": "user", "content": prompt}})
        content = [{"type": "text", "text": _text(rng, 6, 20)}]
        message = {"model": "claude-sonnet-4-5-20250929", "id": mid, "type": "message",
                   "role": "assistant", "content": content, "stop_reason": "end_turn",
                   "usage": {"input_tokens": 12, "output_tokens": 30}}  # fmt: skip
        return put(asked, "assistant", {"message": message, "requestId": f"req_{mid[4:]}"})

    last: str | None = None
    for t in range(1, rewinds + 2):
        if t > 1:  # asked under the end of the turn before, then rewound
            turn(last, f"retry {t}: " + _text(rng, 4, 12), f"msg_{t:05d}rw")
        last = turn(last, f"step {t}: " + _text(rng, 4, 12), f"msg_{t:05d}end")
    folder = root / "projects" / "-home-dev-project1"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def pi_rewound(root: Path, rewinds: int, seed: int = 7) -> Path:
    """One pi session file branched at every turn, as `claude_rewound`: before each of
    `rewinds` + 1 turns of its main line, a prompt was asked under the end of the turn
    before, answered and left behind (pi's /tree), so the file holds `rewinds` + 1 leaves.
    Written under `root/sessions/--home-dev-project1--/`; returns the file."""
    rng = random.Random(seed)
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    header = {"type": "session", "version": 3, "id": sid,
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/dev/project1"}  # fmt: skip
    lines: list[bytes] = [orjson.dumps(header)]
    clock = 0

    def put(parent: str | None, message: dict[str, Any]) -> str:
        nonlocal clock
        clock += rng.randint(1, 20)
        me = f"{rng.getrandbits(32):08x}"
        stamp = f"2026-01-{1 + clock // 86400 % 28:02d}T{clock // 3600 % 24:02d}:"
        stamp += f"{clock // 60 % 60:02d}:{clock % 60:02d}.{clock % 1000:03d}Z"
        entry = {"type": "message", "id": me, "parentId": parent, "timestamp": stamp,
                 "message": {**message, "timestamp": clock * 1000}}  # fmt: skip
        lines.append(orjson.dumps(entry))
        return me

    def turn(parent: str | None, prompt: str) -> str:
        asked = put(parent, {"role": "user", "content": [{"type": "text", "text": prompt}]})
        answer = {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 6, 20)}],
                  "api": "anthropic-messages", "provider": "anthropic",
                  "model": "claude-sonnet-4-5", "stopReason": "stop",
                  "usage": {"input": 12, "output": 30, "cacheRead": 0, "cacheWrite": 0,
                            "totalTokens": 42}}  # fmt: skip
        return put(asked, answer)

    last: str | None = None
    for t in range(1, rewinds + 2):
        if t > 1:  # asked under the end of the turn before, then left for another path
            turn(last, f"retry {t}: " + _text(rng, 4, 12))
        last = turn(last, f"step {t}: " + _text(rng, 4, 12))
    folder = root / "sessions" / "--home-dev-project1--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-01-01T00-00-00-000Z_{sid}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# --- Codex ------------------------------------------------------------------------

_OUTPUT = "\n".join(f"line {i}: " + "x" * 60 for i in range(30))


def _thread(n: int) -> str:
    return f"0199{n:04x}-0000-7000-8000-{n:012x}"


def _rollout(n: int, turns: int, fork_of: list[bytes] | None = None) -> list[bytes]:
    tid = _thread(n)
    clock = iter(range(10**9))

    def line(kind: str, payload: dict[str, Any]) -> bytes:
        ms = next(clock)
        ts = f"2025-09-01T10:{(ms // 60000) % 60:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"
        return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload})

    meta: dict[str, Any] = {
        "id": tid,
        "timestamp": "2025-09-01T10:00:00.000Z",
        "cwd": "/work/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.46.0",
        "source": "cli",
        "model_provider": "openai",
        "base_instructions": {"text": "You are Codex. " * 600},
    }
    out = [line("session_meta", meta)]
    if fork_of is not None:
        out[0] = line("session_meta", {**meta, "forked_from_id": _thread(n - 1)})
        out.extend(fork_of)
    for t in range(turns):
        turn = f"turn-{n}-{t}"
        call = f"call_{n}_{t}"
        text = f"prompt {t} of thread {n}: please look at the code and fix the failing test"
        out += [
            line("event_msg", {"type": "task_started", "turn_id": turn}),
            line(
                "turn_context",
                {
                    "cwd": "/work/proj",
                    "approval_policy": "on-request",
                    "sandbox_policy": {"type": "workspace-write"},
                    "model": "gpt-5-codex",
                    "effort": "medium",
                    "summary": "auto",
                },
            ),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            ),
            line("event_msg", {"type": "user_message", "message": text, "images": []}),
            line("event_msg", {"type": "agent_reasoning", "text": "**Looking** at it"}),
            line(
                "response_item",
                {
                    "type": "reasoning",
                    "id": f"rs_{n}_{t}",
                    "summary": [{"type": "summary_text", "text": "**Looking** at it"}],
                    "encrypted_content": "gAAAA" + "z" * 800,
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": call,
                    "arguments": '{"command":["bash","-lc","pytest -q"]}',
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": orjson.dumps(
                        {"output": _OUTPUT, "metadata": {"exit_code": 1}}
                    ).decode(),
                },
            ),
            line("event_msg", {"type": "agent_message", "message": "Fixed it."}),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{n}_{t}",
                    "content": [{"type": "output_text", "text": "Fixed it."}],
                },
            ),
            line(
                "event_msg",
                {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 1000 * t}}},
            ),
            line(
                "event_msg",
                {"type": "task_complete", "turn_id": turn, "last_agent_message": "Fixed it."},
            ),
        ]
    return out


def codex_home(home: Path, megabytes: float) -> int:
    """Rollouts until the home holds about `megabytes` MB; returns the bytes written."""
    folder = home / "sessions" / "2025" / "09" / "01"
    folder.mkdir(parents=True, exist_ok=True)
    total, n, previous = 0, 0, None
    while total < megabytes * 1_000_000:
        n += 1
        fork = previous is not None and n % 10 == 0
        lines = _rollout(n, 40, previous[1:] if fork and previous else None)
        data = b"\n".join(lines) + b"\n"
        (folder / f"rollout-2025-09-01T10-00-00-{_thread(n)}.jsonl").write_bytes(data)
        total += len(data)
        previous = lines
    return total
