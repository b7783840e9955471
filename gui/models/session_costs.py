"""What the session list says of a session's usage: its own cost (the Cost column), its
tokens (the row's tooltip), and a lineage's total, in which a prefix a fork shares with its
source counts once (each session's own part: a root's is all of it, a fork's is what came
after its seed). Qt-free; the parts are the host's (`sessions usage`, `usage.own` of rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from forkwise.core.client.reports import UsagePart, row_usage

Part = UsagePart

#: the Cost cell of a session with no usage recorded (the offline model, nothing asked yet)
NO_USAGE = "—"
#: the Cost cell of a session whose tokens have no price (a model the price table lacks)
NO_PRICE = "no price"


def token_count(part: Part | None) -> int:
    """Every token of `part` (reasoning is inside output)."""
    if not part:
        return 0
    return part["input"] + part["output"] + part["cacheRead"] + part["cacheWrite"]


def money(cost: float) -> str:
    """USD as the list shows it: cents, or a finer figure under a cent."""
    if cost == 0:
        return "$0.00"
    if cost < 0.01:
        return f"${cost:.4f}"
    return f"${cost:,.2f}"


def cost_text(part: Part | None) -> str:
    """The Cost cell: the part's cost, "no price" when its tokens have none, "—" when it
    has no tokens."""
    if part is None or not token_count(part):
        return NO_USAGE
    return NO_PRICE if part["cost"] is None else money(part["cost"])


def tokens_text(part: Part | None) -> str:
    """"1,200 in · 480 out · 20,000 cache read" (the fields that are not 0)."""
    if not part:
        return "no tokens"
    counts = ((part["input"], "in"), (part["output"], "out"),
              (part["cacheRead"], "cache read"), (part["cacheWrite"], "cache write"))
    words = [f"{count:,} {word}" for count, word in counts if count]
    return " · ".join(words) or "no tokens"


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


def part_line(part: Part | None) -> str:
    """A part's cost and tokens in one line: "$0.0123 · 1,200 in · 480 out"."""
    if not token_count(part):
        return "no tokens recorded"
    return f"{cost_text(part)} · {tokens_text(part)}"
