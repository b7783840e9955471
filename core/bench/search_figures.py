"""Search figures: a word query over a large store with its index warm, through the real
host and client, and the index built from the logs against decoding those logs.

Baselines: the query has none the issue names (its 100 ms target stands in); the build is
compared with reading every session file and decoding each line with orjson — the least
any index made from the logs has to do.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

import orjson

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.search_index import SearchIndex
from forkwise.core.store.session_store import SessionStore

#: a word of the synthetic vocabulary (core/bench/synth.py): it is in most messages
QUERY = "branch"


def parse_logs(root: Path) -> float:
    """Seconds to read every session file and decode each of its lines."""
    start = time.perf_counter()
    loads = orjson.loads
    for entry in os.scandir(root / "sessions"):
        with open(entry.path, "rb") as fh:
            for line in fh.read().split(b"\n"):
                if line:
                    loads(line)
    return time.perf_counter() - start


def build_index(root: Path) -> float:
    """Seconds to make the index anew from the logs (the store's summary index warm, as
    it is once any Forkwise process has listed the store)."""
    store = SessionStore(JsonlBackend(root))
    store.list()
    index = SearchIndex(root / "search.sqlite")
    start = time.perf_counter()
    index.rebuild(store)
    took = time.perf_counter() - start
    index.close()
    store.close()
    return took


async def _queries(root: Path, repeat: int) -> tuple[float, int]:
    host = Host.open(root)
    client = await Client.in_process(host)
    try:
        await client.search(QUERY)  # warm: the index caught up, pages in the cache
        times = []
        hits = 0
        for _ in range(max(3, repeat)):
            start = time.perf_counter()
            hits = len(await client.search(QUERY, 50))
            times.append(time.perf_counter() - start)
        return statistics.median(times), hits
    finally:
        await client.close()
        await host.close()


def run_search(root: Path, repeat: int) -> tuple[float, float, float, int]:
    """(query seconds, build seconds, parse seconds, hits) over the store at `root`."""
    # Alternated and equally many, so that load on a shared machine falls on both
    # sides of the ratio alike (a single build against a median of parses swung by 2x).
    parses: list[float] = []
    builds: list[float] = []
    for _ in range(repeat):
        parses.append(parse_logs(root))
        builds.append(build_index(root))
    parse = statistics.median(parses)
    build = statistics.median(builds)
    query, hits = asyncio.run(_queries(root, repeat))
    return query, build, parse, hits
