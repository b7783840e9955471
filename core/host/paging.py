"""Pages of a long reply: a reply larger than one socket message is fetched in parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson


def page_end(items: Sequence[Any], start: int, budget: int) -> int:
    """The end of the page of `items` that starts at `start`: at least one item, then as
    many as fit in about `budget` bytes of JSON (the item that crosses it included).

    Runs of items are measured in one encoding each, the run doubling while it fits and
    halving when it does not, so a page costs about twice its bytes in encoding rather
    than a call per item (a 100,000-event context has some 40,000 items).
    """
    n = len(items)
    if start >= n:
        return start
    end, used, run = start, 0, 1
    while end < n and used < budget:
        chunk = items[end : end + run]
        size = len(orjson.dumps(chunk)) - 1  # the list's brackets, less one comma
        if used + size > budget and run > 1:
            run //= 2  # too much at once: try half as many
            continue
        used += size
        end += len(chunk)
        run *= 2
    return end
