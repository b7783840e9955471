"""Deterministic pi session files, shaped as pi's SessionManager writes them.

Learnt from packages/coding-agent/src/core/session-manager.ts and messages.ts of
badlogic/pi-mono (and @mariozechner/pi-ai's message types): a header line
`{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}`, then one
`JSON.stringify`'d entry per line with `id` (8 hex digits) and `parentId`; appending makes a
child of the current leaf and `branch(id)` moves the leaf back. Version 1 files have no ids
(and may carry `branchedFrom` and the model in the header); version 2 files call custom
messages `hookMessage`.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

SID = "0193a1b2-0000-7000-8000-000000000001"
PROVIDER = "anthropic"
MODEL = "claude-sonnet-4-5"


def usage(inp: int = 100, out: int = 20) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": inp + out,
        "cost": {
            "input": inp * 3e-6,
            "output": out * 1.5e-5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": inp * 3e-6 + out * 1.5e-5,
        },
    }


class PiSession:
    """Builds one pi session file entry by entry, with a fixed clock and ids."""

    def __init__(
        self,
        session_id: str,
        cwd: str = "/home/ada/project",
        *,
        version: int = 3,
        parent_session: str | None = None,
        start: datetime = datetime(2025, 12, 8, 22, 41, 5, tzinfo=UTC),
        header_extra: dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.version = version
        self.clock = start
        header: dict[str, Any] = {"type": "session"}
        if version >= 2:
            header["version"] = version
        header.update({"id": session_id, "timestamp": self._iso(), "cwd": cwd})
        if parent_session is not None:
            header["parentSession" if version >= 2 else "branchedFrom"] = parent_session
        header.update(header_extra or {})
        self.header = header
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self._n = 0

    # -- plumbing ---------------------------------------------------------------------

    def _iso(self) -> str:
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _tick(self) -> tuple[str, int]:
        self.clock += timedelta(seconds=3)
        return self._iso(), int(self.clock.timestamp() * 1000)

    def _new_id(self) -> str:
        self._n += 1
        return hashlib.blake2b(f"{self.session_id}/{self._n}".encode(), digest_size=4).hexdigest()

    def append(self, etype: str, **fields: Any) -> str:
        iso, _ = self._tick()
        entry: dict[str, Any] = {"type": etype}
        eid = self._new_id()
        if self.version >= 2:
            entry["id"] = eid
            entry["parentId"] = self.leaf
        entry["timestamp"] = iso
        entry.update(fields)
        self.entries.append(entry)
        self.leaf = eid
        return eid

    def adopt(self, lines: list[bytes]) -> None:
        """Copy another file's entry lines (as pi's fork does) and continue after them."""
        for raw in lines:
            entry = orjson.loads(raw)
            self.entries.append(entry)
            self.leaf = entry.get("id")

    def branch(self, entry_id: str | None) -> None:
        self.leaf = entry_id

    def message(self, message: dict[str, Any]) -> str:
        return self.append("message", message=message)

    # -- entries ------------------------------------------------------------------------

    def user(self, text: str, images: tuple[str, ...] = ()) -> str:
        _, ms = self._tick()
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "image", "data": data, "mimeType": "image/png"} for data in images]
        return self.message({"role": "user", "content": content, "timestamp": ms})

    def assistant(
        self,
        text: str | None = None,
        *,
        thinking: str | None = None,
        calls: tuple[tuple[str, str, dict[str, Any]], ...] = (),
        stop: str | None = None,
        provider: str = PROVIDER,
        model: str = MODEL,
        error: str | None = None,
        redacted: bool = False,
    ) -> str:
        _, ms = self._tick()
        content: list[dict[str, Any]] = []
        if thinking is not None:
            content.append(
                {
                    "type": "thinking",
                    "thinking": thinking,
                    "thinkingSignature": "sig-" + thinking[:8],
                }
            )
        if redacted:
            content.append(
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": "opaque==",
                    "redacted": True,
                }
            )
        if text is not None:
            content.append({"type": "text", "text": text})
        for call_id, name, args in calls:
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": usage(),
            "stopReason": stop or ("toolUse" if calls else "stop"),
            "timestamp": ms,
        }
        if error is not None:
            message["errorMessage"] = error
        return self.message(message)

    def tool_result(
        self,
        call_id: str,
        name: str,
        text: str,
        *,
        is_error: bool = False,
        details: dict[str, Any] | None = None,
        images: tuple[str, ...] = (),
    ) -> str:
        _, ms = self._tick()
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "image", "data": data, "mimeType": "image/png"} for data in images]
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
        }
        if details is not None:
            message["details"] = details
        message.update({"isError": is_error, "timestamp": ms})
        return self.message(message)

    def bash(
        self,
        command: str,
        output: str,
        exit_code: int | None = 0,
        *,
        cancelled: bool = False,
        exclude: bool = False,
    ) -> str:
        _, ms = self._tick()
        message: dict[str, Any] = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": exit_code,
            "cancelled": cancelled,
            "truncated": False,
            "timestamp": ms,
        }
        if exclude:
            message["excludeFromContext"] = True
        return self.message(message)

    def custom_role_message(self, custom_type: str, content: str) -> str:
        """A message entry with a custom role (`hookMessage` before v3)."""
        _, ms = self._tick()
        role = "hookMessage" if self.version < 3 else "custom"
        return self.message(
            {
                "role": role,
                "customType": custom_type,
                "content": content,
                "display": True,
                "timestamp": ms,
            }
        )

    def model_change(self, provider: str, model: str) -> str:
        return self.append("model_change", provider=provider, modelId=model)

    def thinking_level(self, level: str) -> str:
        return self.append("thinking_level_change", thinkingLevel=level)

    def compaction(self, summary: str, first_kept: str | int, tokens_before: int = 50000) -> str:
        if isinstance(first_kept, int):  # v1: an index into the file's entries (header = 0)
            return self.append(
                "compaction",
                summary=summary,
                firstKeptEntryIndex=first_kept,
                tokensBefore=tokens_before,
            )
        return self.append(
            "compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=tokens_before
        )

    def branch_summary(self, from_id: str, summary: str) -> str:
        self.leaf = from_id
        return self.append("branch_summary", fromId=from_id, summary=summary)

    def custom(self, custom_type: str, data: Any) -> str:
        return self.append("custom", customType=custom_type, data=data)

    def custom_message(self, custom_type: str, content: str, display: bool = True) -> str:
        return self.append(
            "custom_message", customType=custom_type, content=content, display=display
        )

    def label(self, target: str, label: str | None) -> str:
        return self.append("label", targetId=target, label=label)

    def session_info(self, name: str) -> str:
        return self.append("session_info", name=name)

    # -- output -------------------------------------------------------------------------

    def lines(self) -> list[bytes]:
        return [orjson.dumps(self.header)] + [orjson.dumps(e) for e in self.entries]

    def entry_lines(self) -> list[bytes]:
        return [orjson.dumps(e) for e in self.entries]

    def file_name(self) -> str:
        stamp = self.header["timestamp"].replace(":", "-").replace(".", "-")
        return f"{stamp}_{self.session_id}.jsonl"

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self.file_name()
        path.write_bytes(b"\n".join(self.lines()) + b"\n")
        return path


def line_of(path: Path, entry_id: str) -> int:
    """The 1-based line of the entry `entry_id` in a file."""
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if raw and orjson.loads(raw).get("id") == entry_id:
            return number
    raise KeyError(entry_id)


def coding_session(
    session_id: str = "0193a1b2-0000-7000-8000-000000000001", **kw: Any
) -> PiSession:
    """A realistic linear v3 session: two model changes, a thinking level, a tool loop with
    an error result, a bash command, a title, an image, a label and an extension entry."""
    s = PiSession(session_id, **kw)
    s.model_change(PROVIDER, MODEL)
    s.thinking_level("medium")
    s.user("Read the README and summarise it", images=("iVBORw0KGgo=",))
    s.assistant(
        thinking="I should read the file first", calls=(("toolu_1", "read", {"path": "README.md"}),)
    )
    s.tool_result("toolu_1", "read", "# Demo\nA small project.", details={"lines": 2})
    s.assistant(calls=(("toolu_2", "read", {"path": "MISSING.md"}),))
    s.tool_result("toolu_2", "read", "ENOENT: no such file", is_error=True)
    first_answer = s.assistant("The README describes a small demo project.")
    s.session_info("Summarise the README")
    s.label(first_answer, "summary")
    s.bash("ls", "README.md\nsrc\n")
    s.custom("todo-extension", {"items": ["write tests"]})
    s.model_change("openai", "gpt-5")
    s.user("Now list the source folder")
    s.assistant(
        calls=(("call_9", "bash", {"command": "ls src"}),), provider="openai", model="gpt-5"
    )
    s.tool_result("call_9", "bash", "main.py\n")
    s.assistant("There is one file: main.py.", provider="openai", model="gpt-5")
    return s


def settled(path: Path) -> Path:
    """Make a file look finished (written an hour ago)."""
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def branchy() -> tuple[PiSession, dict[str, str]]:
    """main: q1 a1 q2 a2 q5 a5; branch B: q1 a1 q3 a3; branch C (from B): q1 a1 q3 a3 q4 a4."""
    s = PiSession(SID)
    ids: dict[str, str] = {}
    ids["q1"] = s.user("one")
    ids["a1"] = s.assistant("first")
    ids["q3"] = s.user("three")
    ids["a3"] = s.assistant("third")
    ids["q4"] = s.user("four")
    ids["a4"] = s.assistant("fourth")
    s.branch(ids["a3"])
    ids["q6"] = s.user("six")
    ids["a6"] = s.assistant(calls=(("c", "read", {"path": "x"}),))
    s.branch(ids["a1"])
    ids["q2"] = s.user("two")
    ids["a2"] = s.assistant("second")
    ids["q5"] = s.user("five")
    ids["a5"] = s.assistant("fifth")
    return s, ids
