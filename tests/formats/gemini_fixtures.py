"""Deterministic Gemini CLI session files, shaped as Gemini CLI's ChatRecordingService writes
them (google-gemini/gemini-cli, packages/core/src/services/chatRecordingService.ts).

A session file starts with the metadata line (`sessionId`, `projectHash` = sha256 of the
project folder, `startTime`, `lastUpdated`, and `kind`/`directories` for a subagent);
every recorded message is appended whole (`JSON.stringify`, one line) and followed by
`{"$set":{"lastUpdated":…}}`; a message that changes (its tool calls finish, its tokens
arrive) is appended again under the same id; `/rewind` appends `{"$rewindTo": id}`; a
summary arrives as `{"$set":{"summary":…}}`. Projects are registered in
`~/.gemini/projects.json` and claimed by `tmp/<slug>/.project_root`.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

SID = "4f2b6c1e-8d3a-4e5f-9a7b-0c1d2e3f4a5b"
MODEL = "gemini-2.5-pro"
CWD = "/home/ada/project"


def tokens(inp: int = 120, out: int = 30) -> dict[str, int]:
    return {"input": inp, "output": out, "cached": 0, "thoughts": 5, "tool": 0, "total": inp + out + 5}


class GeminiSession:
    """Builds one Gemini CLI session file line by line, with a fixed clock and ids."""

    def __init__(
        self,
        session_id: str = SID,
        cwd: str = CWD,
        *,
        kind: str | None = None,
        start: datetime = datetime(2026, 3, 2, 9, 15, 0, tzinfo=UTC),
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.clock = start
        self.kind = kind
        meta: dict[str, Any] = {
            "sessionId": session_id,
            "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
            "startTime": self._iso(),
            "lastUpdated": self._iso(),
        }
        if kind is not None:
            meta["kind"] = kind
            meta["directories"] = [cwd]
        self.start = self._iso()
        self.lines: list[dict[str, Any]] = [meta]
        self.messages: dict[str, dict[str, Any]] = {}
        self._n = 0

    def _iso(self) -> str:
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _tick(self) -> str:
        self.clock += timedelta(seconds=2)
        return self._iso()

    def _id(self) -> str:
        self._n += 1
        digest = hashlib.sha256(f"{self.session_id}:{self._n}".encode()).hexdigest()
        return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"

    def _push(self, message: dict[str, Any]) -> str:
        self.messages[message["id"]] = message
        self.lines.append(dict(message))
        self.lines.append({"$set": {"lastUpdated": self._tick()}})
        return str(message["id"])

    # -- what Gemini CLI records --------------------------------------------------------

    def user(self, text: str) -> str:
        return self._push(
            {"id": self._id(), "timestamp": self._tick(), "type": "user", "content": [{"text": text}]}
        )

    def gemini(
        self,
        text: str,
        *,
        thoughts: list[tuple[str, str]] = (),  # type: ignore[assignment]
        model: str = MODEL,
        usage: dict[str, int] | None = None,
    ) -> str:
        ts = self._tick()
        message: dict[str, Any] = {
            "id": self._id(),
            "timestamp": ts,
            "type": "gemini",
            "content": text,
            "thoughts": [{"subject": s, "description": d, "timestamp": ts} for s, d in thoughts],
            "tokens": usage,
            "model": model,
        }
        return self._push(message)

    def tool_calls(self, calls: list[dict[str, Any]], *, model: str = MODEL) -> str:
        """Tool calls as recordToolCalls adds them: to the last gemini message (appended again
        under its id), or as a new gemini message when the last message is not one."""
        ts = self._tick()
        full = [
            {
                "id": c["id"],
                "name": c["name"],
                "args": c.get("args", {}),
                "result": c.get("result"),
                "status": c.get("status", "success"),
                "timestamp": ts,
                "resultDisplay": c.get("display"),
                "displayName": c["name"],
                "description": "",
                "renderOutputAsMarkdown": False,
            }
            for c in calls
        ]
        last = list(self.messages.values())[-1] if self.messages else None
        if last is not None and last["type"] == "gemini":
            updated = {**last, "toolCalls": [*(last.get("toolCalls") or []), *full]}
            return self._push(updated)
        return self._push(
            {"id": self._id(), "timestamp": ts, "type": "gemini", "content": "", "toolCalls": full,
             "thoughts": [], "model": model}
        )

    def add_tokens(self, usage: dict[str, int]) -> None:
        last = list(self.messages.values())[-1]
        self._push({**last, "tokens": usage})

    def info(self, kind: str, text: str) -> str:
        return self._push({"id": self._id(), "timestamp": self._tick(), "type": kind, "content": text})

    def rewind(self, message_id: str) -> None:
        ids = list(self.messages)
        if message_id in ids:
            for mid in ids[ids.index(message_id) :]:
                del self.messages[mid]
        else:
            self.messages.clear()
        self.lines.append({"$rewindTo": message_id})

    def summary(self, text: str) -> None:
        self.lines.append({"$set": {"summary": text}})

    def checkpoint(self) -> None:
        self.lines.append({"$set": {"messages": list(self.messages.values()), "lastUpdated": self._tick()}})

    # -- files --------------------------------------------------------------------------

    def data(self) -> bytes:
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)

    def write(self, gemini: Path, slug: str = "project", *, parent: str | None = None) -> Path:
        """Write under `gemini` (a `.gemini` folder), registering the project as Gemini CLI
        does; a subagent's file goes to `chats/<parent>/<id>.jsonl`."""
        folder = gemini / "tmp" / slug
        chats = folder / "chats"
        if parent is not None:
            chats = chats / parent
        chats.mkdir(parents=True, exist_ok=True)
        (folder / ".project_root").write_text(self.cwd)
        registry = gemini / "projects.json"
        known = orjson.loads(registry.read_bytes())["projects"] if registry.exists() else {}
        known[self.cwd] = slug
        registry.write_bytes(orjson.dumps({"projects": known}))
        if parent is not None:
            path = chats / f"{self.session_id}.jsonl"
        else:
            stamp = self.start[:16].replace(":", "-")
            path = chats / f"session-{stamp}-{self.session_id[:8]}.jsonl"
        path.write_bytes(self.data())
        return path


def settled(path: Path) -> Path:
    """Date the file back past the reader's live window (a finished session)."""
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def coding_session(session_id: str = SID) -> GeminiSession:
    """Two turns: a tool call that reads a file, then a plain question; a summary."""
    s = GeminiSession(session_id)
    s.user("Read the README and summarise it")
    s.gemini("", thoughts=[("Planning", "I should read the file first")])
    s.tool_calls(
        [
            {
                "id": "read_file-1-aa",
                "name": "read_file",
                "args": {"absolute_path": f"{CWD}/README.md"},
                "result": [{"functionResponse": {"id": "read_file-1-aa", "name": "read_file",
                                                 "response": {"output": "# Demo\nA small demo."}}}],
            }
        ]
    )
    s.add_tokens(tokens(100, 10))
    s.gemini("The README describes a small demo project.", usage=tokens())
    s.user("Now list the source folder")
    s.gemini("There is one file: main.py.", usage=tokens(200, 12))
    s.summary("Summarise the README")
    return s
