"""Replay: one pure function from a log to what the model and the person see.

A forked child is replayed by the same function; its seeded messages carry `origin`
(the source session, message and turn), derived from the child's own header and events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from forkwise.core.log.events import (
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
    return Replayer(parent_session, seed_length).feed(events).result()


class Replayer:
    """The replay fold, kept open: `feed` new events as they are appended, read `result`.

    `replay()` is this fold run once over a whole log; a live session keeps one Replayer and
    feeds it only what was appended, so a step costs what is new, not the whole history.
    """

    def __init__(self, parent_session: str | None = None, seed_length: int = 0) -> None:
        self.parent_session = parent_session
        self.seed_length = seed_length
        self.last_seq = 0
        self.messages: list[MessageView] = []
        self.message_ids: set[str] = set()
        self._transcript: list[dict[str, Any]] = []
        self._transcript_seqs: list[int] = []
        self._title: str | None = None
        self._model: Mapping[str, Any] | None = None
        self._open_turn: str | None = None
        self._pending: dict[str, Event] = {}
        self._forked_from: Mapping[str, Any] | None = None
        self._turn_status: dict[str, str] = {}
        self._answered_calls: set[str] = set()
        self._turn_calls: list[tuple[str, int]] = []

    def _say(self, entry: dict[str, Any], seq: int) -> None:
        self._transcript.append(entry)
        self._transcript_seqs.append(seq)

    def feed(self, events: Iterable[Event]) -> Replayer:
        for event in events:
            self._feed_one(event)
            self.last_seq = event.seq
        return self

    def _feed_one(self, event: Event) -> None:
        etype = event.type
        if etype == MESSAGE:
            origin = None
            if self.parent_session is not None and event.seq <= self.seed_length:
                origin = {
                    "session_id": self.parent_session,
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
            self.messages.append(view)
            self.message_ids.add(view.id)
            self._say(_provider_message(view), view.seq)
            self._turn_calls.extend((str(c.get("id")), view.seq) for c in view.tool_calls)
        elif etype == TOOL_RESULT:
            self._answered_calls.add(event.get("call"))
            self._say(
                {
                    "role": "tool",
                    "tool_call_id": event.get("call"),
                    "content": _as_text(event.get("output")),
                },
                event.seq,
            )
        elif etype == TURN_START:
            self._open_turn = event.get("turn")
            self._turn_status[event.get("turn")] = "running"
            self._turn_calls.clear()
        elif etype == TURN_END:
            # A tool call that never got a result gets an explicit placeholder, so the
            # provider transcript stays well-formed after a cancelled or interrupted turn.
            for call_id, seq in self._turn_calls:
                if call_id not in self._answered_calls:
                    self._say(
                        {
                            "role": "tool",
                            "tool_call_id": call_id,
                            "content": "(no result: the turn ended first)",
                        },
                        seq,
                    )
            self._turn_calls.clear()
            self._turn_status[event.get("turn")] = event.get("status")
            self._open_turn = None
            self._pending.clear()
        elif etype == APPROVAL_REQUEST:
            self._pending[event.get("approval")] = event
        elif etype == APPROVAL_RESOLVE:
            self._pending.pop(event.get("approval"), None)
        elif etype == MODEL_SELECT:
            self._model = event.fields
        elif etype == SESSION_TITLE:
            self._title = event.get("title")
        elif etype == HISTORY_FORK:
            self._forked_from = event.fields
        elif etype == CONTEXT_SUMMARY:
            through = event.get("through")
            if type(through) is int:
                # the summary stands in for everything it covers
                kept = [
                    (m, q)
                    for m, q in zip(self._transcript, self._transcript_seqs, strict=True)
                    if q > through
                ]
                summary = {"role": "system", "content": str(event.get("text", ""))}
                self._transcript = [summary, *(m for m, _ in kept)]
                self._transcript_seqs = [0, *(q for _, q in kept)]

    def result(self) -> Replay:
        return Replay(
            messages=tuple(self.messages),
            transcript=tuple(self._transcript),
            title=self._title,
            model=self._model,
            open_turn=self._open_turn,
            pending_approvals=tuple(self._pending.values()),
            forked_from=self._forked_from,
            turn_status=dict(self._turn_status),
        )


def _provider_message(view: MessageView) -> dict[str, Any]:
    out: dict[str, Any] = {"role": view.role, "content": view.text}
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
