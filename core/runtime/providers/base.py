"""The provider interface the agent runtime drives.

A provider turns a provider transcript (see `forkwise.core.log.replay`) into one assistant
step: streamed text deltas, then a final result with the whole text and any tool calls
(`steps`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # what a step yields (`steps`): a turn's types, which a listing never makes
    from forkwise.core.runtime.providers.steps import StepItem


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
