"""What the session list says of a session's usage: its own cost (the Cost column), its
tokens (the row's tooltip), and a lineage's total, in which a prefix a fork shares with its
source counts once (each session's own part: a root's is all of it, a fork's is what came
after its seed). Qt-free; the parts are the host's (`sessions usage`, `usage.own` of rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from forkwise.core.reading.usage_words import (
    NO_PRICE,
    NO_USAGE,
    TOKEN_WORDS,
    Part,
    cost_text,
    money,
    part_line,
    token_count,
    tokens_text,
)

#: the words of a part are the reading layer's (the transcript's footers and the exports
#: say them too); the list's own rules follow
__all__ = ["NO_PRICE", "NO_USAGE", "cost_text", "money", "part_line", "token_count",
           "tokens_text"]


def own_part(row: Mapping[str, Any]) -> Part | None:
    """A listed row's own usage part (`usage.own`), if the listing carried it."""
    usage = row.get("usage")
    own = usage.get("own") if isinstance(usage, Mapping) else None
    return own if isinstance(own, Mapping) else None


def sort_cost(part: Part | None) -> float:
    """What the Cost column sorts by: the cost, then unpriced sessions, then those with no
    tokens at all."""
    if not token_count(part):
        return -2.0
    cost = (part or {}).get("cost")
    return -1.0 if cost is None else float(cost)


def lineage_total(parts: Iterable[Part | None]) -> dict[str, Any]:
    """The sessions' own parts summed: a lineage's total with each shared prefix once.
    `cost` is None when no part has a price, `unpriced` counts parts with tokens and none."""
    total: dict[str, Any] = {key: 0 for key, _ in TOKEN_WORDS}
    cost: float | None = None
    unpriced = 0
    for part in parts:
        if not token_count(part):
            continue
        assert part is not None
        for key, _ in TOKEN_WORDS:
            total[key] += int(part.get(key) or 0)
        if part.get("cost") is None:
            unpriced += 1
        else:
            cost = (cost or 0.0) + float(part["cost"])
    total["cost"] = cost
    total["unpriced"] = unpriced
    return total


def lineage_line(total: Mapping[str, Any], sessions: int) -> str:
    """The tooltip line of a lineage's root: its total, shared prefixes counted once."""
    tokens = token_count(total)
    if not tokens:
        return f"Lineage of {sessions} sessions: no tokens recorded"
    cost = total.get("cost")
    figure = NO_PRICE if cost is None else money(float(cost))
    if cost is not None and total.get("unpriced"):
        figure += f" (+ {total['unpriced']} without a price)"
    return (f"Lineage of {sessions} sessions: {figure}, {tokens:,} tokens "
            "(shared prefixes counted once)")


def shared_text(part: Part | None) -> str | None:
    """What a fork's header says of the prefix it shares with its source: "shared prefix
    $0.0123 · 12,345 tokens", tokens alone ("no price") when they have no price; None when
    the prefix used no tokens."""
    tokens = token_count(part)
    if not tokens:
        return None
    cost = (part or {}).get("cost")
    if cost is None:
        return f"shared prefix {tokens:,} tokens (no price)"
    return f"shared prefix {money(float(cost))} · {tokens:,} tokens"
