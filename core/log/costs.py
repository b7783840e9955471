"""What tokens cost, from the price table `genai-prices` ships (pinned with the package,
read offline: nothing is fetched at run time), and the usage report built on it.

A report is `{"own", "shared", "total", "byModel": {model: …}}`, each part
`{"input", "output", "cacheRead", "cacheWrite", "reasoning", "cost"}`. Cost is priced per
model and day. A model the table does not know is priced at the cost its agent reported
(pi records one), else not at all: its tokens count, its cost is null. A part whose tokens
all lack a price has cost null; one with some priced tokens sums what is known.
A lineage's total is the sum of its sessions' own parts: a root's own part is all of it,
a fork's own part is what came after the prefix it copied, so each token counts once.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

from forkwise.core.log.usage import Buckets, SessionTokens, Tally, merged

#: tokens a price per token is measured on: a request this size is in every model's base
#: tier (long-prompt tiers start at 128k-200k tokens), and a total priced per token stays
#: in it too (a tier is a property of one request, not of a session's sum)
_REFERENCE = 1000


@functools.lru_cache(maxsize=4096)
def _price_per_token(model: str, day: str) -> tuple[float, float, float, float] | None:
    """(input, output, cache read, cache write) USD per token for `model` on `day`, or None
    when the table has no price for it (base tier). The table is loaded on first use."""
    if not model:
        return None
    from genai_prices import calc_price
    from genai_prices.types import Usage

    try:
        when = datetime.fromisoformat(day).replace(tzinfo=UTC) if day else None
    except ValueError:
        when = None
    n = _REFERENCE
    prices: list[float] = []
    for usage in (
        Usage(input_tokens=n),
        Usage(output_tokens=n),
        Usage(input_tokens=n, cache_read_tokens=n),
        Usage(input_tokens=n, cache_write_tokens=n),
    ):
        try:
            result = calc_price(usage, model, genai_request_timestamp=when)
        except LookupError:
            return None
        prices.append(float(result.total_price) / n)
    return prices[0], prices[1], prices[2], prices[3]


def price(model: str, day: str, tally: Tally) -> float | None:
    """USD for `tally`'s tokens of `model` on `day` (None: no price is known)."""
    per = _price_per_token(model, day)
    if per is None:
        return tally.reported_cost if tally.reported else None
    return (
        tally.input * per[0]
        + tally.output * per[1]
        + tally.cache_read * per[2]
        + tally.cache_write * per[3]
    )


def part(buckets: Buckets) -> dict[str, Any]:
    """One part of a report: the tokens of `buckets` summed, and their cost."""
    total = Tally()
    cost: float | None = None
    for (model, day), tally in buckets.items():
        total.merge(tally)
        priced = price(model, day, tally)
        if priced is not None:
            cost = (cost or 0.0) + priced
    out = total.to_json()
    out["cost"] = None if cost is None else round(cost, 6)
    return out


def by_model(buckets: Buckets) -> dict[str, dict[str, Any]]:
    grouped: dict[str, Buckets] = {}
    for (model, day), tally in buckets.items():
        grouped.setdefault(model or "unknown", {})[(model, day)] = tally
    return {model: part(b) for model, b in sorted(grouped.items())}


def usage_report(st: SessionTokens) -> dict[str, Any]:
    """`sessions usage`'s answer for one session."""
    total = merged(st.shared.items(), st.own.items())
    return {
        "own": part(st.own),
        "shared": part(st.shared),
        "total": part(total),
        "byModel": by_model(total),
    }
