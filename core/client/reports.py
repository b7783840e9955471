"""A session's usage as the client hands it out (`usage`, and `usage.own` of the rows that
`list_sessions(usage=True)` lists): one typed definition for every front end.

The host builds each part with `core.log.costs.part`; `usage_part` and `usage_report` make
complete typed values from what arrived (a key missing takes its default: 0 tokens, no
cost), so a front end reads fields, never `.get("…")` with a fallback of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class UsagePart(TypedDict):
    """Tokens and their cost; reasoning is counted inside output."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    reasoning: int
    #: USD, None when no token of the part has a price
    cost: float | None


class RowUsage(TypedDict):
    """A listed row's `usage`: the session's own part (what came after its seed)."""

    own: UsagePart


class UsageReport(TypedDict):
    """`usage(session)`: its own part, the part it shares with its source, their total,
    and the total by model."""

    own: UsagePart
    shared: UsagePart
    total: UsagePart
    byModel: dict[str, UsagePart]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_part(data: object) -> UsagePart:
    """`data` (a part as the host sends it, or None) as a complete part."""
    got: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    cost = got.get("cost")
    return UsagePart(
        input=_count(got.get("input")), output=_count(got.get("output")),
        cacheRead=_count(got.get("cacheRead")), cacheWrite=_count(got.get("cacheWrite")),
        reasoning=_count(got.get("reasoning")),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )  # fmt: skip


def row_usage(data: object) -> RowUsage | None:
    """A row's `usage` as sent ({"own": …}), or None when the row carries none."""
    if not isinstance(data, Mapping) or not isinstance(data.get("own"), Mapping):
        return None
    return RowUsage(own=usage_part(data["own"]))


def usage_report(data: Mapping[str, Any]) -> UsageReport:
    """`usage`'s answer as sent, complete."""
    models = data.get("byModel")
    return UsageReport(
        own=usage_part(data.get("own")), shared=usage_part(data.get("shared")),
        total=usage_part(data.get("total")),
        byModel={str(m): usage_part(p) for m, p in models.items()}
        if isinstance(models, Mapping) else {},
    )  # fmt: skip
