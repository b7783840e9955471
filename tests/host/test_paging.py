"""page_end: pages of a long reply that join to the whole and stay near their budget."""

from __future__ import annotations

import random

import orjson
import pytest

from forkwise.core.host.paging import page_end


def json_size(items: list[dict[str, str]]) -> int:
    """Bytes of items as page_end counts them: each item and one comma."""
    return sum(len(orjson.dumps(i)) + 1 for i in items)


def sized(rng: random.Random, skewed: bool) -> int:
    """An item's text length: even, or mostly short with now and then a huge one (a tool's
    output), which makes a run sized by the items before it overshoot."""
    if skewed and rng.random() < 0.03:
        return rng.randint(5_000, 50_000)
    return rng.randint(0, 400)


@pytest.mark.parametrize("skewed", [False, True])
@pytest.mark.parametrize("budget", [1, 50, 700, 5_000, 60_000, 10**9])
def test_pages_join_to_the_whole_and_each_is_as_long_as_its_budget_allows(
    budget: int, skewed: bool
) -> None:
    rng = random.Random(budget)
    items = [{"role": "user", "content": "x" * sized(rng, skewed)} for _ in range(300)]
    pages, start = [], 0
    while start < len(items):
        end = page_end(items, start, budget)
        page = items[start:end]
        assert page, "every page holds at least one item"
        # under the budget until the item that crosses it, which the page still takes
        assert json_size(page[:-1]) < budget
        if end < len(items):
            assert json_size(page) >= budget
        pages.append(page)
        start = end
    assert [i for p in pages for i in p] == items
    assert page_end(items, len(items), budget) == len(items)
