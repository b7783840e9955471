"""What the log says about a session's open turn, and how a turn came out.

Pure functions over a session snapshot; the agent runtime reads these before every move,
so its decisions always follow the log as it is on disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from forkwise.core.log.event_log import event_types, last_index_of
from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    MESSAGE,
    MODEL_SELECT,
    STEP_END,
    STEP_START,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    Event,
    message_text,
)
from forkwise.core.log.turns import open_turn_start, written_by_agent
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.store.session import Session

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    approval: str
    call: str
    tool: str
    args: Mapping[str, Any]

    def to_dict(self) -> Json:
        return {
            "approval": self.approval,
            "call": self.call,
            "tool": self.tool,
            "args": dict(self.args),
        }


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call of the current step, with the person's decision and whether it ran."""

    call: str
    tool: str
    args: Mapping[str, Any]
    decision: str | None
    answered: bool


@dataclass
class OpenTurn:
    id: str
    start_seq: int
    steps: int = 0
    open_step: str | None = None
    calls: list[PendingCall] = field(default_factory=list)
    pending: dict[str, ApprovalRequest] = field(default_factory=dict)
    #: its events came from an agent's own file (they carry `src`): an imported session
    #: the agent is still writing; the turn is the agent's to end, not this host's
    agent: bool = False

    @classmethod
    def of(cls, snap: Session) -> OpenTurn | None:
        """The open turn at the end of the log, or None when every turn has ended."""
        events = snap.events
        start = open_turn_start(events, len(events))
        if start is None:
            return None
        turn = cls(id=str(events[start - 1].get("turn")), start_seq=start)
        raw_calls: list[tuple[str, str, Mapping[str, Any]]] = []
        decisions: dict[str, str] = {}
        results: set[str] = set()
        for event in events[start:]:
            etype = event.type
            if written_by_agent(event):
                turn.agent = True
            if etype == STEP_START:
                turn.steps += 1
                turn.open_step = str(event.get("step"))
                raw_calls = []
            elif etype == STEP_END:
                turn.open_step = None
            elif etype == MESSAGE and event.get("role") == "assistant":
                raw_calls = [
                    (str(p.get("id")), str(p.get("name")), p.get("args") or {})
                    for p in event.get("parts")
                    if isinstance(p, Mapping) and p.get("type") == "tool_call"
                ]
            elif etype == APPROVAL_REQUEST:
                turn.pending[event.get("approval")] = ApprovalRequest(
                    event.get("approval"),
                    event.get("call"),
                    event.get("tool"),
                    event.get("args") or {},
                )
            elif etype == APPROVAL_RESOLVE:
                request = turn.pending.pop(event.get("approval"), None)
                call = event.get("call") or (request.call if request else None)
                if isinstance(call, str):
                    decisions[call] = event.get("decision")
            elif etype == TOOL_RESULT:
                results.add(event.get("call"))
        turn.calls = [
            PendingCall(cid, name, args, decisions.get(cid), cid in results)
            for cid, name, args in raw_calls
        ]
        return turn

    def end(self, status: str, error: str | None = None, step: str | None = None) -> list[Json]:
        """Drafts that close this turn (and its open step) with `status`."""
        drafts: list[Json] = []
        open_step = step or self.open_step
        if open_step is not None:
            drafts.append({"type": STEP_END, "turn": self.id, "step": open_step})
        end: Json = {"type": TURN_END, "turn": self.id, "status": status}
        if error is not None:
            end["error"] = error
        drafts.append(end)
        return drafts


def outcome_of(snap: Session, turn: str) -> Json:
    """How turn `turn` came out so far: status, last reply, error, pending approvals."""
    status = "running"
    reply: str | None = None
    error: str | None = None
    events = snap.events
    start = _turn_start(events, turn)
    seen = start is not None
    for i in range(len(events) if start is None else start, len(events)):
        event = events[i]  # a turn's events follow its turn/start
        if event.type == MESSAGE and event.get("role") == "assistant":
            reply = message_text(event)
        elif event.type == TURN_END:
            status = str(event.get("status"))
            error = event.get("error")
            break
    approvals: list[Json] = []
    if status == "running":
        open_turn = OpenTurn.of(snap)
        if open_turn is not None and open_turn.id == turn and open_turn.pending:
            status = "waiting"
            approvals = [r.to_dict() for r in open_turn.pending.values()]
    return {
        "sessionId": snap.id,
        "turn": turn if seen else None,
        "status": status,
        "reply": reply,
        "error": error,
        "approvals": approvals,
    }


def _turn_start(events: Sequence[Event], turn: str) -> int | None:
    """Index of the latest turn/start of `turn` (turns are usually near the end)."""
    types = event_types(events)
    for i in range(len(types) - 1, -1, -1):
        if types[i] == TURN_START and events[i].get("turn") == turn:
            return i
    return None


def choice_of(model: Mapping[str, Any] | None) -> ModelChoice | None:
    """The model choice a `model/select` event (as replay reports it) records."""
    if not model:
        return None
    provider, name = model.get("provider"), model.get("model")
    if not isinstance(provider, str) or not isinstance(name, str):
        return None
    reasoning = model.get("reasoning")
    return ModelChoice(provider, name, reasoning if isinstance(reasoning, str) else None)


def latest_choice(snap: Session) -> ModelChoice | None:
    """The last `model/select` anywhere in the log (the one the next turn uses)."""
    i = last_index_of(snap.events, MODEL_SELECT)
    return None if i is None else choice_of(snap.events[i].fields)
