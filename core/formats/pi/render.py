"""Forkwise events as pi entries: the turns a person added in Forkwise after a fork.

Each entry is chained to the one before it (`parentId`), so pi continues from the last
one. Messages become pi `message` entries (user; assistant with text, thinking and
toolCall blocks; toolResult), model/select becomes `model_change` (and a
`thinking_level_change` when its reasoning changes), session/title becomes `session_info`.
Turn brackets, steps, approvals and history/fork have no pi entry (pi's header names the
source file); any other event (context/*, plugin/*) is kept as a pi `custom` entry of type
`forkwise`, which pi stores and leaves out of the model's context.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

_SKIPPED = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "approval/request",
        "approval/resolve",
        "history/fork",
    }
)
_STOP = {"completed": "stop", "cancelled": "aborted", "interrupted": "aborted", "failed": "error"}
_ZERO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def millis(ts: str) -> int:
    """An ISO-8601 time as the Unix milliseconds pi keeps in message timestamps."""
    try:
        return int(datetime.fromisoformat(ts).timestamp() * 1000)
    except ValueError:
        return 0


def short_id(taken: set[str]) -> str:
    """A new entry id of pi's kind: 8 hex digits, unique in the file."""
    while True:
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            taken.add(candidate)
            return candidate


class Renderer:
    """Renders events one by one; `with_ids` is False under a v1 header (pi gives ids to
    every entry of such a file itself when it opens it)."""

    def __init__(
        self,
        events: Sequence[Mapping[str, Any]],
        parent: str | None,
        taken: set[str],
        with_ids: bool,
        model: tuple[str, str] | None,
    ) -> None:
        self.parent = parent
        self.taken = taken
        self.with_ids = with_ids
        self.model = model
        self.reasoning: str | None = None
        self.lines: list[bytes] = []
        # how each turn ended, and its last answer, decide that answer's stopReason
        self._status: dict[str, Mapping[str, Any]] = {}
        self._last_answer: dict[str, str] = {}
        for event in events:
            if event.get("type") == "turn/end":
                self._status[str(event.get("turn"))] = event
            elif event.get("type") == "message" and event.get("role") == "assistant":
                self._last_answer[str(event.get("turn"))] = str(event.get("id"))

    def seen(self, event: Mapping[str, Any]) -> None:
        """An event copied from the source: it still sets the model new answers name."""
        if event.get("type") == "model/select":
            self._note_model(event)

    def _note_model(self, event: Mapping[str, Any]) -> None:
        provider, model = event.get("provider"), event.get("model")
        if isinstance(provider, str) and isinstance(model, str):
            self.model = (provider, model)
        reasoning = event.get("reasoning")
        self.reasoning = reasoning if isinstance(reasoning, str) else None

    def _entry(self, etype: str, ts: str, **fields: Any) -> None:
        entry: dict[str, Any] = {"type": etype}
        if self.with_ids:
            eid = short_id(self.taken)
            entry["id"] = eid
            entry["parentId"] = self.parent
            self.parent = eid
        entry["timestamp"] = ts
        entry.update(fields)
        self.lines.append(orjson.dumps(entry))

    def render(self, event: Mapping[str, Any]) -> None:
        etype = str(event.get("type"))
        ts = str(event.get("ts", ""))
        if etype in _SKIPPED:
            return
        if etype == "message":
            self._entry("message", ts, message=self._message(event, ts))
        elif etype == "tool/result":
            output = event.get("output")
            text = output if isinstance(output, str) else orjson.dumps(output).decode()
            message = {
                "role": "toolResult",
                "toolCallId": str(event.get("call")),
                "toolName": str(event.get("tool")),
                "content": [{"type": "text", "text": text}],
                "isError": bool(event.get("error")),
                "timestamp": millis(ts),
            }
            self._entry("message", ts, message=message)
        elif etype == "model/select":
            before = self.reasoning
            self._note_model(event)
            if self.model is not None:
                self._entry("model_change", ts, provider=self.model[0], modelId=self.model[1])
            if self.reasoning != before:
                self._entry("thinking_level_change", ts, thinkingLevel=self.reasoning or "off")
        elif etype == "session/title":
            self._entry("session_info", ts, name=str(event.get("title", "")))
        else:
            data = {k: v for k, v in event.items() if k != "seq"}
            self._entry("custom", ts, customType="forkwise", data=data)

    def _message(self, event: Mapping[str, Any], ts: str) -> dict[str, Any]:
        parts = [p for p in event.get("parts") or () if isinstance(p, Mapping)]
        if event.get("role") != "assistant":
            content = [
                {"type": "text", "text": str(p.get("text", ""))}
                for p in parts
                if p.get("type") == "text"
            ]
            return {"role": "user", "content": content, "timestamp": millis(ts)}
        blocks: list[dict[str, Any]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            elif kind == "reasoning":
                blocks.append({"type": "thinking", "thinking": str(part.get("text", ""))})
            elif kind == "tool_call":
                args = part.get("args")
                blocks.append(
                    {
                        "type": "toolCall",
                        "id": str(part.get("id")),
                        "name": str(part.get("name")),
                        "arguments": dict(args) if isinstance(args, Mapping) else {},
                    }
                )
        provider, model = self.model or ("forkwise", "unknown")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": "openai-completions" if provider == "openai" else provider,
            "provider": provider,
            "model": model,
            "usage": event.get("usage") if isinstance(event.get("usage"), Mapping) else _ZERO_USAGE,
            "stopReason": self._stop_reason(event, blocks),
            "timestamp": millis(ts),
        }
        if message["stopReason"] == "error":
            end = self._status.get(str(event.get("turn")), {})
            message["errorMessage"] = str(end.get("error") or "the turn failed")
        return message

    def _stop_reason(self, event: Mapping[str, Any], blocks: list[dict[str, Any]]) -> str:
        if any(b["type"] == "toolCall" for b in blocks):
            return "toolUse"
        turn = str(event.get("turn"))
        end = self._status.get(turn)
        if end is None or self._last_answer.get(turn) != event.get("id"):
            return "stop"
        return _STOP.get(str(end.get("status")), "stop")
