"""What a provider's step yields: streamed text, then the whole step with its tool calls.

Apart from `base` (the model choice and the provider interface), which every host imports
(a catalogue row names the model): only a turn needs these, and a one-shot listing does
not define them (four frozen dataclasses cost ~1.5 ms of a listing's imports, -X importtime).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed assistant text (sent to subscribers, not persisted)."""

    text: str


@dataclass(frozen=True, slots=True)
class StepResult:
    """The whole assistant step once the stream ended. `thinking`: the reasoning parts as
    the message keeps them when the vendor signs them (Anthropic: `signature`, or
    `redacted` data), which go back to it verbatim; else `reasoning` is one plain part.
    `usage`: the step's tokens as a `usage` record's fields (`forkwise.core.log.usage`),
    None when the vendor reported none."""

    text: str
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default=())
    thinking: tuple[Mapping[str, Any], ...] = field(default=())
    usage: Mapping[str, Any] | None = None


StepItem = TextDelta | StepResult
