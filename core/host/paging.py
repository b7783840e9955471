"""Pages of a long reply: a reply larger than one socket message is fetched in parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

#: a run grows at most this many times the items the page holds so far
_GROWTH = 8


def page_end(items: Sequence[Any], start: int, budget: int) -> int:
    """The end of the page of `items` that starts at `start`: at least one item, then as
    many as fit in about `budget` bytes of JSON (the item that crosses it included).

    Runs of items are measured in one encoding each (a call per item costs four times
    as much: a 100,000-event context has some 40,000 items). Each run is seven eighths
    of what the budget left holds at the size items had so far, so that few runs
    overshoot; one that does is cut to what its own size says fits. On a real context a
    page so costs about its own bytes in encoding (doubling runs cost three times that).
    """
    n = len(items)
    if start >= n:
        return start
    end, used, run = start, 0, 1
    while end < n and used < budget:
        chunk = items[end : end + run]
        size = len(orjson.dumps(chunk)) - 1  # the list's brackets, less one comma
        if used + size > budget and run > 1:
            run = max(1, min(len(chunk) // 2, (budget - used) * len(chunk) // size))
            continue
        used += size
        end += len(chunk)
        fits = (budget - used) // max(1, used // (end - start))
        run = max(1, min(_GROWTH * (end - start), fits - fits // 8))
    return end
