"""Deterministic generator of Claude Code transcripts, shaped as Claude Code writes them.

Entries follow the 2.0.77 writer (`insertMessageChain`): the context fields first
(`parentUuid`, `isSidechain`, `userType`, `cwd`, `sessionId`, `version`, `gitBranch`), then the
message's own (`type`, `message`, `uuid`, `timestamp`, …); one assistant entry per content
block, all sharing `message.id`; a tool result is a user entry whose `parentUuid` is the
assistant entry that made the call (`sourceToolAssistantUUID`); a compaction boundary has
`parentUuid: null` and `logicalParentUuid`. A `/branch` copy (2.1) adds `forkedFrom`.
"""

from __future__ import annotations

import hashlib
import os
import uuid as uuidlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.formats.base import ImportedSession

MODEL = "claude-sonnet-4-5-20250929"
OTHER_MODEL = "claude-opus-4-1-20250805"
CWD = "/home/dev/proj.x"
START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


def det_uuid(seed: str) -> str:
    raw = bytearray(hashlib.blake2b(seed.encode(), digest_size=16).digest())
    return str(uuidlib.UUID(bytes=bytes(raw), version=4))


class Transcript:
    """Builds the entries of one file; `last` is the chain's end (the default parent)."""

    def __init__(
        self,
        session_id: str,
        *,
        cwd: str = CWD,
        version: str = "2.0.77",
        start: datetime = START,
        sidechain: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self.clock = start
        self.entries: list[dict[str, Any]] = []
        self.last: str | None = None
        self.sidechain = sidechain
        self.agent_id = agent_id
        self._n = 0
        self._msg = 0
        self.forked_from: str | None = None

    def _uuid(self) -> str:
        self._n += 1
        return det_uuid(f"{self.session_id}:{self.agent_id}:{self._n}")

    def tick(self, seconds: float = 1.0) -> str:
        self.clock += timedelta(seconds=seconds)
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _entry(
        self, kind: str, body: dict[str, Any], parent: str | bool | None, **extra: Any
    ) -> str:
        uuid = extra.pop("uuid", None) or self._uuid()
        entry: dict[str, Any] = {
            "parentUuid": self.last if parent is True else parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": "main",
        }
        if self.agent_id is not None:
            entry["agentId"] = self.agent_id
        entry["type"] = kind
        entry.update(body)
        entry["uuid"] = uuid
        entry["timestamp"] = extra.pop("timestamp", None) or self.tick()
        entry.update(extra)
        if self.forked_from is not None:
            entry["forkedFrom"] = {"sessionId": self.forked_from, "messageUuid": uuid}
        self.entries.append(entry)
        self.last = uuid
        return uuid

    # --- entries -------------------------------------------------------------------

    def user(self, content: str | list[Any], parent: str | bool | None = True, **extra: Any) -> str:
        body = {"message": {"role": "user", "content": content}}
        return self._entry("user", body, parent, **extra)

    def assistant(
        self,
        blocks: list[dict[str, Any]],
        parent: str | bool | None = True,
        model: str = MODEL,
        stop: str | None = "end_turn",
    ) -> list[str]:
        """One entry per block, as Claude Code streams them; the last carries `stop`."""
        self._msg += 1
        mid = (
            "msg_01"
            + hashlib.blake2b(
                f"{self.session_id}:{self.agent_id}:{self._msg}".encode(), digest_size=8
            ).hexdigest()
        )
        request = "req_011" + mid[6:18]
        uuids = []
        for n, block in enumerate(blocks):
            final = n == len(blocks) - 1
            message = {
                "model": model,
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if final else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 10 + n,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 1200,
                    "output_tokens": 5 * (n + 1),
                    "service_tier": "standard",
                },
            }
            uuids.append(
                self._entry(
                    "assistant",
                    {"message": message, "requestId": request},
                    parent if n == 0 else True,
                )
            )
        return uuids

    def tool_result(
        self,
        call: str,
        output: str | list[Any],
        source: str,
        is_error: bool = False,
        result: Any = None,
    ) -> str:
        block: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": output}
        if is_error:
            block["is_error"] = True
        body = {"message": {"role": "user", "content": [block]}}
        return self._entry(
            "user",
            body,
            source,
            toolUseResult=result if result is not None else {"stdout": output, "stderr": ""},
        )

    def meta(self, text: str) -> str:
        return self.user(text, isMeta=True)

    def interrupt(self) -> str:
        return self.user([{"type": "text", "text": "[Request interrupted by user]"}])

    def compact(self, summary: str) -> tuple[str, str]:
        boundary = self._entry(
            "system",
            {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {"trigger": "manual", "preTokens": 51234},
            },
            None,
            logicalParentUuid=self.last,
        )
        text = "This session is being continued from a previous conversation. " + summary
        summ = self.user(text, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        return boundary, summ

    def system(self, subtype: str, content: str) -> str:
        return self._entry(
            "system", {"subtype": subtype, "content": content, "level": "error"}, True
        )

    def raw(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)

    def summary(self, text: str, leaf: str) -> None:
        self.raw({"type": "summary", "summary": text, "leafUuid": leaf})

    def custom_title(self, text: str) -> None:
        self.raw({"type": "custom-title", "customTitle": text, "sessionId": self.session_id})

    def ai_title(self, text: str) -> None:
        self.raw({"type": "ai-title", "aiTitle": text, "sessionId": self.session_id})

    def snapshot(self, message_id: str) -> None:
        self.raw(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": {},
                    "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
                },
                "isSnapshotUpdate": False,
            }
        )

    # --- common shapes -------------------------------------------------------------

    def exchange(self, prompt: str, answer: str, model: str = MODEL) -> tuple[str, list[str]]:
        """A prompt (with its file-history snapshot) and a one-block answer."""
        p = self.user(prompt)
        self.snapshot(p)
        return p, self.assistant([{"type": "text", "text": answer}], model=model)

    def tool_turn(self, prompt: str, command: str, output: str, answer: str) -> dict[str, Any]:
        """A prompt, thinking + text + a Bash call, its result, then the final answer."""
        p = self.user(prompt)
        self.snapshot(p)
        call = "toolu_01" + hashlib.blake2b(prompt.encode(), digest_size=8).hexdigest()
        first = self.assistant(
            [
                {"type": "thinking", "thinking": f"Think about {command}", "signature": "c2ln"},
                {"type": "text", "text": f"I will run {command}."},
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "Bash",
                    "input": {"command": command, "description": "run it"},
                },
            ],
            stop="tool_use",
        )
        result = self.tool_result(call, output, first[-1])
        final = self.assistant([{"type": "text", "text": answer}])
        return {"prompt": p, "first": first, "call": call, "result": result, "final": final}

    # --- output --------------------------------------------------------------------

    def encode(self) -> bytes:
        return b"".join(orjson.dumps(e) + b"\n" for e in self.entries)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.encode())
        return path


def project_file(root: Path, t: Transcript) -> Path:
    """Where Claude Code keeps `t` under a config folder `root`."""
    munged = "".join(c if c.isascii() and c.isalnum() else "-" for c in t.cwd)
    return root / "projects" / munged / f"{t.session_id}.jsonl"


SID = "5d1f3a2e-8c4b-4f6a-9e7d-0a1b2c3d4e5f"
OTHER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def write_old(t: Transcript, root: Path) -> Path:
    """Write `t` where Claude Code would, with an mtime long past (not being written)."""
    path = t.write(project_file(root, t))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def rewound(t: Transcript) -> dict[str, str]:
    """Two turns, then a rewind to before the second prompt and a different second prompt."""
    t.exchange("first question", "first answer")
    fork_at = t.last
    old_prompt, _ = t.exchange("second question", "second answer")
    t.exchange("third question", "third answer")
    t.last = fork_at
    new_prompt, _ = t.exchange("second question, rephrased", "another answer")
    return {"old": old_prompt, "new": new_prompt}


def rich_transcript() -> Transcript:
    t = Transcript(SID)
    t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    t.compact("Summary: listed files.")
    t.exchange("and now?", "Nothing else.")
    t.custom_title("Listing")
    return t


def forkwise_turn(main: ImportedSession) -> list[dict[str, Any]]:
    ts = "2026-02-01T10:00:00.000Z"
    turn = "turn:fw-1"
    return [
        {"type": "history/fork", "ts": ts, "source": main.id, "boundary": len(main.events)},
        {"type": "model/select", "ts": ts, "provider": "offline", "model": "echo-1"},
        {"type": "turn/start", "ts": ts, "turn": turn},
        {
            "type": "message",
            "ts": ts,
            "turn": turn,
            "id": "user:count:fw1",
            "role": "user",
            "parts": [{"type": "text", "text": "count the lines"}],
        },
        {
            "type": "message",
            "ts": ts,
            "turn": turn,
            "id": "assistant:counting:fw2",
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "text": "unsigned, not sent back"},
                {"type": "text", "text": "Counting."},
                {"type": "tool_call", "id": "call:1", "name": "Bash", "args": {"command": "wc -l"}},
            ],
        },
        {
            "type": "tool/result",
            "ts": ts,
            "turn": turn,
            "call": "call:1",
            "tool": "Bash",
            "output": "42",
        },
        {
            "type": "message",
            "ts": ts,
            "turn": turn,
            "id": "assistant:42:fw3",
            "role": "assistant",
            "parts": [{"type": "text", "text": "There are 42 lines."}],
        },
        {"type": "turn/end", "ts": ts, "turn": turn, "status": "completed"},
        {"type": "session/title", "ts": ts, "title": "Counting fork"},
    ]
