"""The fork policy: the one place that says where a fork cuts its source and what the child
starts with. Every entry point — the Fork button, a message's "Fork from here", the CLI with
or without a running host, the RPC, a subagent — describes its cut as a `ForkAt` and goes
through `Host.fork_session`, which applies these rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from forkwise.core.errors import InvalidBoundary
from forkwise.core.log.events import Event
from forkwise.core.log.turns import (
    check_boundary,
    message_boundary,
    resolve_anchor,
    subagent_boundary,
)
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.offline import model_select_draft
from forkwise.core.runtime.providers.vendors import routed
from forkwise.core.store.session import SessionSummary


@dataclass(frozen=True, slots=True)
class ForkAt:
    """Where a fork cuts its source; at most one way is given (none: the last completed
    turn, as the Fork button does).

    - `boundary`: the store contract (§3): copy events 1..N exactly; refused inside a turn.
    - `end`: the store's default boundary, the last event.
    - `at_seq`: the host's anchor rule (§4): through the first turn end at or after N.
    - `message_id`: through that message's turn (§5), or with `include_message=False`
      through the event before the turn it opens.
    - `subagent`: clipped to the last completed turn while the parent's turn is open (§5).
    """

    boundary: int | None = None
    end: bool = False
    at_seq: int | None = None
    message_id: str | None = None
    include_message: bool = True
    subagent: bool = False

    def __post_init__(self) -> None:
        given = [
            name
            for name, value in (
                ("boundary", self.boundary is not None),
                ("end", self.end),
                ("atSeq", self.at_seq is not None),
                ("messageId", self.message_id is not None),
                ("subagent", self.subagent),
            )
            if value
        ]
        if len(given) > 1:
            raise InvalidBoundary(
                f"a fork takes one position, got {' and '.join(given)}", given=given
            )
        if not self.include_message and self.message_id is None:
            raise InvalidBoundary("leaving the message out needs a message id")

    @property
    def exact(self) -> bool:
        """The store contract's positions (`boundary`, `end`): applied exactly or refused."""
        return self.boundary is not None or self.end

    @property
    def last_turn(self) -> bool:
        """The Fork button's cut: through the last completed turn."""
        return (
            self.boundary is None
            and not self.end
            and self.at_seq is None
            and self.message_id is None
            and not self.subagent
        )

    def resolve(self, events: Sequence[Event], session_id: str) -> int:
        """The exact boundary in `events` (a typed error when there is none)."""
        if self.message_id is not None:
            return message_boundary(events, self.message_id, self.include_message, session_id)
        if self.boundary is not None:
            return check_boundary(events, self.boundary)
        if self.end:
            return check_boundary(events, len(events))
        if self.subagent:
            return subagent_boundary(events)
        return resolve_anchor(events, self.at_seq, session_id)

    def anchor(self) -> dict[str, Any] | None:
        """The anchor fields of the child's `history/fork` when the request names them
        (a message); None lets the store derive them from the copied prefix."""
        if self.message_id is None:
            return None
        return {"anchorMessage": self.message_id, "includeMessage": self.include_message}


def child_model(
    source: SessionSummary, served: Callable[[ModelChoice], bool], default: ModelChoice
) -> ModelChoice | None:
    """The model a child starts on: the latest one its source logged (anywhere in the log,
    even after the cut), when this host serves it; else the host's default, so that the
    child says which model will answer (an imported Claude or Codex model with no such
    endpoint). None when the source never chose one."""
    if source.provider is None or source.model is None:
        return None
    # the provider of the model's vendor: a Claude model on `anthropic`, gpt-* on `openai`…
    choice = routed(ModelChoice(source.provider, source.model, source.reasoning))
    return choice if served(choice) else default


def follow_drafts(choice: ModelChoice | None) -> list[dict[str, Any]]:
    """What a child's log gets right after its `history/fork`: its `model/select`."""
    return [] if choice is None else [model_select_draft(choice)]
