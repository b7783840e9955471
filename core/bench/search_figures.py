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


async def _first_after_import(home: Path, store_dir: Path) -> tuple[float, float, float]:
    """(first search after the import, the same search again, the background build's
    seconds): an import through a host a client listens to, then its search index built
    in the background, as the app sees it before the person's first search."""
    host = Host.open(store_dir)
    client = await Client.in_process(host)
    try:
        await client.subscribe(lambda note: None)
        await client.import_files([str(home)], "claude")
        start = time.perf_counter()
        await host.search_built()
        built = time.perf_counter() - start
        start = time.perf_counter()
        await client.search(QUERY, 50)
        first = time.perf_counter() - start
        start = time.perf_counter()
        await client.search(QUERY, 50)
        return first, time.perf_counter() - start, built
    finally:
        await client.close()
        await host.close()


def run_search_after_import(tmp: Path, sessions: int, repeat: int) -> tuple[float, float, float]:
    """Medians of `_first_after_import` over fresh stores of `sessions` Claude Code
    sessions (the same files each time)."""
    import shutil

    from forkwise.core.bench.synth_sources import claude_projects

    home = tmp / "search-import-home"
    claude_projects(home, sessions=sessions, turns=6, seed=5)
    runs = []
    for i in range(repeat):
        store_dir = tmp / f"search-import-store-{i}"
        runs.append(asyncio.run(_first_after_import(home, store_dir)))
        shutil.rmtree(store_dir, ignore_errors=True)
    first, again, built = (statistics.median(r[k] for r in runs) for k in range(3))
    return first, again, built


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
