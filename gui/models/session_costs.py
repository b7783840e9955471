"""What the session list says of a session's usage: its own cost (the Cost column), its
tokens (the row's tooltip), and a lineage's total, in which a prefix a fork shares with its
source counts once (each session's own part: a root's is all of it, a fork's is what came
after its seed). Qt-free; the parts are the host's (`sessions usage`, `usage.own` of rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from forkwise.core.client.reports import UsagePart, row_usage
from forkwise.core.reading.usage_words import (
    NO_PRICE,
    NO_USAGE,
    cost_text,
    money,
    part_line,
    token_count,
    tokens_text,
)

Part = UsagePart

#: the words of a part are the reading layer's (the transcript's turn lines and the
#: exports say them too); the list's own rules follow
__all__ = ["NO_PRICE", "NO_USAGE", "cost_text", "money", "part_line", "token_count",
           "tokens_text"]


def own_part(row: Mapping[str, Any]) -> Part | None:
    """A listed row's own usage part (`usage.own`), if the listing carried it."""
    usage = row_usage(row["usage"]) if "usage" in row else None
    return usage["own"] if usage is not None else None


def sort_cost(part: Part | None) -> float:
    """What the Cost column sorts by: the cost, then unpriced sessions, then those with no
    tokens at all."""
    if part is None or not token_count(part):
        return -2.0
    return -1.0 if part["cost"] is None else part["cost"]


@dataclass(frozen=True)
class LineageTotal:
    """The sessions' own parts summed: a lineage's total with each shared prefix once.
    `cost` is None when no part has a price; `unpriced` counts parts with tokens and none."""

    tokens: int
    cost: float | None
    unpriced: int


def lineage_total(parts: Iterable[Part | None]) -> LineageTotal:
    tokens, unpriced = 0, 0
    cost: float | None = None
    for part in parts:
        if part is None or not token_count(part):
            continue
        tokens += token_count(part)
        if part["cost"] is None:
            unpriced += 1
        else:
            cost = (cost or 0.0) + part["cost"]
    return LineageTotal(tokens, cost, unpriced)


def lineage_line(total: LineageTotal, sessions: int) -> str:
    """The tooltip line of a lineage's root: its total, shared prefixes counted once."""
    if not total.tokens:
        return f"Lineage of {sessions} sessions: no tokens recorded"
    figure = NO_PRICE if total.cost is None else money(total.cost)
    if total.cost is not None and total.unpriced:
        figure += f" (+ {total.unpriced} without a price)"
    return (f"Lineage of {sessions} sessions: {figure}, {total.tokens:,} tokens "
            "(shared prefixes counted once)")


def shared_text(part: Part | None) -> str | None:
    """What a fork's header says of the prefix it shares with its source: "shared prefix
    $0.0123 · 12,345 tokens", tokens alone ("no price") when they have no price; None when
    the prefix used no tokens."""
    if part is None or not token_count(part):
        return None
    tokens = token_count(part)
    if part["cost"] is None:
        return f"shared prefix {tokens:,} tokens (no price)"
    return f"shared prefix {money(part['cost'])} · {tokens:,} tokens"

