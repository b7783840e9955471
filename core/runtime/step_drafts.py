"""The drafts a step writes: its opening, its result, and the end of step and turn."""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_RESULT,
    TURN_END,
    text_part,
)
from forkwise.core.log.ids import new_token
from forkwise.core.log.usage import USAGE
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.steps import StepResult

Json = dict[str, Any]


def step_start(turn: str, choice: ModelChoice) -> tuple[str, Json]:
    """A new step's id and its step/start draft."""
    step = new_token("step")
    start: Json = {
        "type": STEP_START,
        "turn": turn,
        "step": step,
        "provider": choice.provider,
        "model": choice.model,
    }
    if choice.reasoning is not None:
        start["reasoning"] = choice.reasoning
    return step, start


def ending(turn: str, step: str, status: str, error: str | None = None) -> list[Json]:
    """Drafts that end step `step` and then turn `turn` with `status`."""
    end: Json = {"type": TURN_END, "turn": turn, "status": status}
    if error is not None:
        end["error"] = error
    return [{"type": STEP_END, "turn": turn, "step": step}, end]


def partial_message(turn: str, step: str, message_id: str, text: str) -> Json:
    """The assistant message of a step stopped while it streamed: the text sent so far,
    marked `partial` (the turn then ends cancelled)."""
    return {
        "type": MESSAGE,
        "id": message_id,
        "role": "assistant",
        "turn": turn,
        "step": step,
        "parts": [text_part(text)],
        "partial": True,
    }


def step_result_drafts(
    turn: str, step: str, result: StepResult, tools: Container[str], message_id: str
) -> tuple[Json, list[Json]]:
    """What a finished step writes: its assistant message (reasoning, text, tool calls),
    and per tool call an `approval/request` (a known tool) or an error `tool/result`."""
    parts: list[Json] = [dict(p) for p in result.thinking]
    if result.reasoning and not parts:
        parts.append({"type": "reasoning", "text": result.reasoning})
    parts.append(text_part(result.text))
    drafts: list[Json] = []
    for call in result.tool_calls:
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "args": dict(call.args)}
        )
        if call.name in tools:
            drafts.append(
                {
                    "type": APPROVAL_REQUEST,
                    "turn": turn,
                    "approval": new_token("approval"),
                    "call": call.id,
                    "tool": call.name,
                    "args": dict(call.args),
                }
            )
        else:
            drafts.append(
                {
                    "type": TOOL_RESULT,
                    "turn": turn,
                    "call": call.id,
                    "tool": call.name,
                    "output": f"there is no tool {call.name!r}",
                    "isError": True,
                }
            )
    message = {
        "type": MESSAGE,
        "id": message_id,
        "role": "assistant",
        "turn": turn,
        "step": step,
        "parts": parts,
    }
    if result.usage is not None:
        # the step's tokens, right after its message (before any tool result or approval)
        drafts.insert(0, {**result.usage, "type": USAGE, "turn": turn, "step": step})
    return message, drafts
