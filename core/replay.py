"""Replay: one pure function from a log to what the model and the person see.

A forked child is replayed by the same function; its seeded messages carry `origin`
(the source session, message and turn), derived from the child's own header and events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    CONTEXT_SUMMARY,
    HISTORY_FORK,
    MESSAGE,
    MODEL_SELECT,
    SESSION_TITLE,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    Event,
    message_text,
)


@dataclass(frozen=True, slots=True)
class MessageView:
    """A top-level message as the UI lists it."""

    id: str
    role: str
    seq: int
    turn: str
    text: str
    parts: tuple[Mapping[str, Any], ...]
    origin: Mapping[str, str] | None = None

    @property
    def tool_calls(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(p for p in self.parts if p.get("type") == "tool_call")

    @property
    def reasoning(self) -> str:
        return "".join(str(p.get("text", "")) for p in self.parts if p.get("type") == "reasoning")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "seq": self.seq,
            "turn": self.turn,
            "text": self.text,
            "parts": [dict(p) for p in self.parts],
        }
        if self.origin is not None:
            out["origin"] = dict(self.origin)
        return out


@dataclass(frozen=True, slots=True)
class Replay:
    messages: tuple[MessageView, ...]
    transcript: tuple[dict[str, Any], ...]
    title: str | None = None
    model: Mapping[str, Any] | None = None
    open_turn: str | None = None
    pending_approvals: tuple[Event, ...] = ()
    forked_from: Mapping[str, Any] | None = None
    turn_status: Mapping[str, str] = field(default_factory=dict)


def replay(
    events: Sequence[Event], parent_session: str | None = None, seed_length: int = 0
) -> Replay:
    """Derive the provider transcript and the UI message list from a log."""
    messages: list[MessageView] = []
    transcript: list[dict[str, Any]] = []
    title: str | None = None
    model: Mapping[str, Any] | None = None
    open_turn: str | None = None
    pending: dict[str, Event] = {}
    forked_from: Mapping[str, Any] | None = None
    turn_status: dict[str, str] = {}
    answered_calls: set[str] = set()
    turn_calls: list[tuple[str, int]] = []

    for event in events:
        etype = event.type
        if etype == MESSAGE:
            origin = None
            if parent_session is not None and event.seq <= seed_length:
                origin = {
                    "session_id": parent_session,
                    "message_id": event.get("id"),
                    "turn_id": event.get("turn"),
                }
            view = MessageView(
                id=event.get("id"),
                role=event.get("role"),
                seq=event.seq,
                turn=event.get("turn"),
                text=message_text(event),
                parts=tuple(p for p in event.get("parts") if isinstance(p, Mapping)),
                origin=origin,
            )
            messages.append(view)
            transcript.append(_provider_message(view))
            turn_calls.extend((str(c.get("id")), view.seq) for c in view.tool_calls)
        elif etype == TOOL_RESULT:
            answered_calls.add(event.get("call"))
            transcript.append(
                {
                    "role": "tool",
                    "tool_call_id": event.get("call"),
                    "content": _as_text(event.get("output")),
                    "_seq": event.seq,
                }
            )
        elif etype == TURN_START:
            open_turn = event.get("turn")
            turn_status[event.get("turn")] = "running"
            turn_calls.clear()
        elif etype == TURN_END:
            # A tool call that never got a result gets an explicit placeholder, so the
            # provider transcript stays well-formed after a cancelled or interrupted turn.
            for call_id, seq in turn_calls:
                if call_id not in answered_calls:
                    transcript.append(
                        {
                            "role": "tool",
                            "tool_call_id": call_id,
                            "content": "(no result: the turn ended first)",
                            "_seq": seq,
                        }
                    )
            turn_calls.clear()
            turn_status[event.get("turn")] = event.get("status")
            open_turn = None
            pending.clear()
        elif etype == APPROVAL_REQUEST:
            pending[event.get("approval")] = event
        elif etype == APPROVAL_RESOLVE:
            pending.pop(event.get("approval"), None)
        elif etype == MODEL_SELECT:
            model = event.fields
        elif etype == SESSION_TITLE:
            title = event.get("title")
        elif etype == HISTORY_FORK:
            forked_from = event.fields
        elif etype == CONTEXT_SUMMARY:
            through = event.get("through")
            if isinstance(through, int) and not isinstance(through, bool):
                transcript = [m for m in transcript if m.get("_seq", 0) > through]
                transcript.insert(
                    0, {"role": "system", "content": str(event.get("text", "")), "_seq": 0}
                )

    cleaned = tuple({k: v for k, v in m.items() if k != "_seq"} for m in transcript)
    return Replay(
        messages=tuple(messages),
        transcript=cleaned,
        title=title,
        model=model,
        open_turn=open_turn,
        pending_approvals=tuple(pending.values()),
        forked_from=forked_from,
        turn_status=turn_status,
    )


def _provider_message(view: MessageView) -> dict[str, Any]:
    out: dict[str, Any] = {"role": view.role, "content": view.text, "_seq": view.seq}
    calls = view.tool_calls
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": _as_text(c.get("args", {}))},
            }
            for c in calls
        ]
    return out


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
