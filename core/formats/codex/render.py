"""Codex rollout records the writer makes itself: the turns added in Forkwise, and the UI
records (`user_message`, `agent_message`, `agent_reasoning`) Codex reads a legacy rollout's
messages from, for copied lines that lack them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from ..base import ExportInput
from .mapping import content_text


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def line(ts: str, kind: str, payload: Mapping[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload})


def user_message(text: str) -> dict[str, Any]:
    return {
        "type": "user_message",
        "message": text,
        "images": [],
        "local_images": [],
        "text_elements": [],
    }


def legacy_twins(raw: bytes) -> list[bytes]:
    """The UI records a legacy rollout keeps next to a paginated `item_completed` line.

    A paginated source (Codex 0.171+) records a message for the UI as `item_completed`; the
    legacy rollout this writer makes is read by Codex from `user_message`, `agent_message`
    and `agent_reasoning` records, so each such item gets its legacy twin after it (the
    copied line itself is unchanged)."""
    record = orjson.loads(raw)
    payload = record.get("payload")
    item = payload.get("item") if isinstance(payload, dict) else None
    if record.get("type") != "event_msg" or record.get("ordinal") is None:
        return []  # a legacy source keeps its own twins
    if not isinstance(item, dict):
        return []
    ts, kind = str(record.get("timestamp", "")), item.get("type")
    text, _ = content_text(item.get("content"))
    if kind == "UserMessage":
        return [line(ts, "event_msg", user_message(text))]
    if kind == "AgentMessage":
        return [line(ts, "event_msg", {"type": "agent_message", "message": text})]
    if kind == "Reasoning":
        summary = item.get("summary_text") or []
        return [
            line(ts, "event_msg", {"type": "agent_reasoning", "text": str(part)})
            for part in summary
        ]
    return []


def last_turn_context(lines: list[bytes]) -> dict[str, Any] | None:
    for raw in reversed(lines):
        if b'"turn_context"' in raw:
            record = orjson.loads(raw)
            if record.get("type") == "turn_context" and isinstance(record.get("payload"), dict):
                payload: dict[str, Any] = record["payload"]
                return payload
    return None


class Renderer:
    """Forkwise events added after the fork -> Codex rollout lines."""

    def __init__(self, session: ExportInput, context: dict[str, Any] | None) -> None:
        self.cwd = session.cwd
        self.context = dict(context) if context else None
        model = session.model or {}
        self.model = str(model.get("model") or (context or {}).get("model") or "gpt-5")
        effort = model.get("reasoning") or (context or {}).get("effort")
        self.effort = effort if isinstance(effort, str) else None
        self.turn: str | None = None
        self.last_text = ""
        self.out: list[bytes] = []

    def _add(self, ts: str, kind: str, payload: Mapping[str, Any]) -> None:
        self.out.append(line(ts, kind, payload))

    def render(self, events: Iterable[Mapping[str, Any]]) -> list[bytes]:
        for event in events:
            kind, ts = event.get("type"), str(event.get("ts") or stamp(datetime.now(UTC)))
            if kind == "model/select":
                self.model = str(event.get("model") or self.model)
                effort = event.get("reasoning")
                self.effort = effort if isinstance(effort, str) else None
            elif kind == "turn/start":
                self._start(str(event.get("turn")), ts)
            elif kind == "message":
                self._message(event, ts)
            elif kind == "tool/result":
                output = event.get("output")
                text = output if isinstance(output, str) else orjson.dumps(output).decode()
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": str(event.get("call")),
                        "output": text,
                    },
                )
            elif kind == "turn/end":
                self._end(str(event.get("status")), ts)
        return self.out

    def _start(self, turn: str, ts: str) -> None:
        self.turn, self.last_text = turn, ""
        started = int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp())
        self._add(
            ts,
            "event_msg",
            {
                "type": "task_started",
                "turn_id": turn,
                "started_at": started,
                "model_context_window": None,
                "collaboration_mode_kind": "default",
            },
        )
        context: dict[str, Any] = (
            dict(self.context)
            if self.context
            else {
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {
                    "type": "workspace-write",
                    "network_access": False,
                    "exclude_tmpdir_env_var": False,
                    "exclude_slash_tmp": False,
                },
                "summary": "auto",
            }
        )
        context["turn_id"] = turn
        context["cwd"] = self.cwd or context.get("cwd")
        context["model"] = self.model
        context.pop("root_turn_id", None)
        if self.effort:
            context["effort"] = self.effort
        else:
            context.pop("effort", None)
        mode = context.get("collaboration_mode")
        if isinstance(mode, dict) and isinstance(mode.get("settings"), dict):
            settings = dict(mode["settings"], model=self.model, reasoning_effort=self.effort)
            context["collaboration_mode"] = dict(mode, settings=settings)
        self._add(ts, "turn_context", context)

    def _message(self, event: Mapping[str, Any], ts: str) -> None:
        parts = event.get("parts") or []
        if event.get("role") == "user":
            text, _ = content_text(parts)
            self._add(
                ts,
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            )
            self._add(ts, "event_msg", user_message(text))
            return
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                text = str(part.get("text", ""))
                self.last_text = text
                self._add(ts, "event_msg", {"type": "agent_message", "message": text})
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    },
                )
            elif kind == "reasoning":
                text = str(part.get("text", ""))
                self._add(ts, "event_msg", {"type": "agent_reasoning", "text": text})
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": text}],
                        "content": None,
                        "encrypted_content": None,
                    },
                )
            elif kind == "tool_call":
                args = part.get("args")
                arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "function_call",
                        "name": str(part.get("name")),
                        "arguments": arguments,
                        "call_id": str(part.get("id")),
                    },
                )

    def _end(self, status: str, ts: str) -> None:
        if self.turn is None:
            return
        if status == "completed":
            self._add(
                ts,
                "event_msg",
                {
                    "type": "task_complete",
                    "turn_id": self.turn,
                    "last_agent_message": self.last_text or None,
                },
            )
        else:
            self._add(
                ts,
                "event_msg",
                {
                    "type": "turn_aborted",
                    "turn_id": self.turn,
                    "reason": "interrupted",
                },
            )
        self.turn = None
