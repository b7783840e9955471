"""The provider interface the agent runtime drives.

A provider turns a provider transcript (see `forkwise.core.log.replay`) into one assistant
step: streamed text deltas, then a final result with the whole text and any tool calls.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """What a `model/select` event records: provider, model and reasoning target."""

    provider: str
    model: str
    reasoning: str | None = None

    def to_event(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "model/select",
            "provider": self.provider,
            "model": self.model,
        }
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        return out


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
    """The whole assistant step once the stream ended."""

    text: str
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default=())


StepItem = TextDelta | StepResult


class Provider(Protocol):
    name: str

    def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncGenerator[StepItem, None]:
        """Yield TextDelta items, then exactly one StepResult. Raises ProviderError, and
        only ones passed through `redact.scrubbed` with the provider's secret (the one
        choke point: whole text redacted first, clipped after).

        An async generator: the agent closes it (`aclose`) once the result is in."""
        ...
