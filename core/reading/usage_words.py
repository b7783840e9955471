"""A usage part in words, as the session list, Compare, the transcript's turn footers and
the exports say it: its cost (or "no price"), its tokens by kind. A part is
`{"input", "output", "cacheRead", "cacheWrite", "reasoning", "cost"}` (`costs.part`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Part = Mapping[str, Any]

#: the Cost cell of a session with no usage recorded (the offline model, nothing asked yet)
NO_USAGE = "—"
#: the Cost cell of a session whose tokens have no price (a model the price table lacks)
NO_PRICE = "no price"
#: token fields as a person reads them, in the order shown
TOKEN_WORDS = (
    ("input", "in"),
    ("output", "out"),
    ("cacheRead", "cache read"),
    ("cacheWrite", "cache write"),
)


def token_count(part: Part | None) -> int:
    """Every token of `part` (reasoning is inside output)."""
    if not part:
        return 0
    return sum(int(part.get(key) or 0) for key, _ in TOKEN_WORDS)


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
    if not token_count(part):
        return NO_USAGE
    cost = (part or {}).get("cost")
    return NO_PRICE if cost is None else money(float(cost))


def tokens_text(part: Part | None) -> str:
    """"1,200 in · 480 out · 20,000 cache read" (the fields that are not 0)."""
    if not part:
        return "no tokens"
    words = [f"{int(part.get(key) or 0):,} {word}" for key, word in TOKEN_WORDS
             if part.get(key)]
    return " · ".join(words) or "no tokens"


def part_line(part: Part | None) -> str:
    """A part's cost and tokens in one line: "$0.0123 · 1,200 in · 480 out"."""
    if not token_count(part):
        return "no tokens recorded"
    return f"{cost_text(part)} · {tokens_text(part)}"
