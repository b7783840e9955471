"""Typed reads of a transcript entry's kind-specific data.

The fold (entries.py) keeps what an event carries as JSON in `Entry.data`: a tool call's
name, arguments and result, an approval's id and decision, a turn's error, the fork record.
Each field is read here once, with its type, so the transcript, its cards, the message
menu and the features read entries through attributes mypy checks, not through
`data.get("…")` scattered over the GUI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ForkRecord:
    """A `history/fork` entry: where the child was cut from its source."""

    source: str
    #: the seq of the source's last event the child copies (0 or None: the beginning)
    boundary: int | None
    #: the message the fork was asked at (Fork from here / before), if any
    anchor_message: str | None
    #: False: cut before the anchor message (it is not in the child)
    include_message: bool | None
    #: "subagent", "continued", or None for a fork a person made
    relation: str | None

    @property
    def before(self) -> bool:
        return self.include_message is False


class EntryFields:
    """The typed fields of an entry's data (`Entry` has them)."""

    kind: str
    data: dict[str, Any]

    # --- a tool call (and an approval, which names its call's tool and arguments) ---

    @property
    def tool_name(self) -> str:
        """A tool call's tool, as the agent named it."""
        return str(self.data.get("name") or "")

    @property
    def args(self) -> object:
        """A tool call's (or an approval's) arguments as the agent wrote them."""
        return self.data.get("args")

    @property
    def task_prompt(self) -> str | None:
        """The prompt a call that starts a subagent gives it (its `prompt` argument)."""
        args = self.args
        prompt = args.get("prompt") if isinstance(args, dict) else None
        return prompt if isinstance(prompt, str) else None

    @property
    def result(self) -> object:
        """A tool call's output; None while no result came."""
        return self.data.get("result")

    @property
    def has_result(self) -> bool:
        return self.data.get("result") is not None

    @property
    def failed(self) -> bool:
        """The call's result reports a failure (`result_failed`)."""
        return self.data.get("is_error") is True

    # --- an approval ---

    @property
    def approval_id(self) -> str:
        return str(self.data.get("approval"))

    @property
    def approval_tool(self) -> str:
        """The tool an approval asks about."""
        return str(self.data.get("tool"))

    @property
    def decision(self) -> str | None:
        """"approved", "denied", "expired", or None while it waits for an answer."""
        decision = self.data.get("decision")
        return None if decision is None else str(decision)

    @property
    def waiting(self) -> bool:
        """An approval that waits for an answer."""
        return self.kind == "approval" and self.data.get("decision") is None

    # --- a turn's end ---

    @property
    def turn_error(self) -> str | None:
        """Why a turn failed (e.g. no provider for the session's model), if it said."""
        error = self.data.get("error")
        return str(error) if error else None

    @property
    def turn_usage(self) -> dict[str, Any] | None:
        """What the turn used and cost (a usage part: tokens by kind and `cost`, USD or
        None), when its usage was recorded."""
        usage = self.data.get("usage")
        return usage if isinstance(usage, dict) else None

    # --- the fork record ---

    @property
    def fork(self) -> ForkRecord:
        data = self.data
        boundary, anchor = data.get("boundary"), data.get("anchorMessage")
        include, relation = data.get("includeMessage"), data.get("relation")
        return ForkRecord(
            source=str(data.get("source")),
            boundary=boundary if isinstance(boundary, int) else None,
            anchor_message=str(anchor) if anchor else None,
            include_message=include if isinstance(include, bool) else None,
            relation=relation if isinstance(relation, str) else None,
        )
