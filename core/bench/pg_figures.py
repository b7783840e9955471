"""Figures of the PostgreSQL store (`python -m forkwise.core.bench --postgres URL`): list
and fork on a database next to the same on JSONL, and next to what the server does alone
(a bare SELECT of the rows; an `INSERT … SELECT` of the same prefix). The database must be
one the bench may fill and empty: it works in a schema of its own, dropped afterwards."""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forkwise.core.bench.synth import session_lines, write_store
from forkwise.core.store.copy import copy_store

#: what each measured process runs; argv: the URL (with the schema), then the session count
PG_LIST = """
import sys
from forkwise.core.store.backends.postgres import PostgresBackend
from forkwise.core.store.session_store import SessionStore
store = SessionStore(PostgresBackend(sys.argv[1]))
rows = store.list()
store.close()
assert len(rows) == int(sys.argv[2]), len(rows)
"""
PG_LIST_BASE = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    rows = conn.execute("SELECT id, summary FROM forkwise_sessions").fetchall()
assert len(rows) == int(sys.argv[2]), len(rows)
"""
PG_FORK = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "fork", "big", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""
PG_FORK_BASE = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    n = int(sys.argv[2])
    conn.execute("INSERT INTO forkwise_sessions SELECT 'copy', header, parent, events, updated,"
                 " summary FROM forkwise_sessions WHERE id = 'big'")
    done = conn.execute("INSERT INTO forkwise_events SELECT 'copy', seq, type, line"
                        " FROM forkwise_events WHERE session = 'big' AND seq <= %s", (n,))
    assert done.rowcount == n
"""


def bench_postgres(
    tmp: Path,
    url: str,
    *,
    sizes: dict[str, int],
    repeat: int,
    figure: Callable[..., Any],
    process: Callable[..., float],
    median: Callable[[Callable[[], float], int], float],
    jsonl_snippets: dict[str, str],
) -> list[Any]:
    """The figures (built with `figure`, timed with `process` in fresh processes)."""
    import psycopg

    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    store = f"{url}{sep}options=-csearch_path%3D{schema}"
    try:
        return _figures(
            tmp,
            store,
            sizes=sizes,
            repeat=repeat,
            figure=figure,
            process=process,
            median=median,
            jsonl=jsonl_snippets,
        )
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _figures(
    tmp: Path,
    store: str,
    *,
    sizes: dict[str, int],
    repeat: int,
    figure: Callable[..., Any],
    process: Callable[..., float],
    median: Callable[[Callable[[], float], int], float],
    jsonl: dict[str, str],
) -> list[Any]:
    import psycopg

    sessions, per, events = sizes["sessions"], sizes["per"], sizes["fork"]
    folder = write_store(tmp / "pg-list-store", sessions, per)
    start = time.perf_counter()
    copy_store(folder, store)
    copied = time.perf_counter() - start
    n = str(sessions)
    pg_list = median(lambda: process(PG_LIST, store, n), repeat)
    pg_base = median(lambda: process(PG_LIST_BASE, store, n), repeat)
    process(jsonl["list"], str(folder), n)  # its index, as after any listing
    jsonl_list = median(lambda: process(jsonl["list"], str(folder), n), repeat)
    load = f"{sessions:,} sessions / {sessions * per:,} events, fresh process"

    big = tmp / "pg-fork-store"
    (big / "sessions").mkdir(parents=True)
    lines = list(session_lines(random.Random(11), "big", events))
    (big / "sessions" / "big.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    copy_store(big, store)
    with psycopg.connect(store) as conn:
        row = conn.execute("SELECT summary FROM forkwise_sessions WHERE id = 'big'").fetchone()
    assert row is not None
    prefix = int(row[0]["events"])

    def tidy() -> None:
        for child in (big / "sessions").glob("*.jsonl"):
            if child.name != "big.jsonl":
                child.unlink()
        with psycopg.connect(store, autocommit=True) as conn:
            conn.execute(
                "DELETE FROM forkwise_sessions WHERE id <> 'big' AND id NOT LIKE 'bench-%'"
            )

    def timed(snippet: str, *args: str) -> float:
        tidy()
        return process(snippet, *args)

    pg_fork = median(lambda: timed(PG_FORK, store), repeat)
    pg_fork_base = median(lambda: timed(PG_FORK_BASE, store, str(prefix)), repeat)
    jsonl_fork = median(lambda: timed(jsonl["fork"], str(big)), repeat)
    tidy()
    fork_load = f"{events:,}-event session, fresh process, last completed turn"
    return [
        figure("pg-list", load, pg_list, pg_base, "SELECT the summary rows (psycopg)", "<= 3x"),
        figure("pg-list-jsonl", load, pg_list, jsonl_list, "the same list on JSONL", "-"),
        figure("pg-fork", fork_load, pg_fork, pg_fork_base, "INSERT … SELECT the rows", "-"),
        figure("pg-fork-jsonl", fork_load, pg_fork, jsonl_fork, "the same fork on JSONL", "-"),
        figure(
            "pg-copy",
            f"store copy of {sessions:,} sessions, folder to database",
            copied,
            jsonl_list,
            "list them on JSONL",
            "-",
        ),
    ]
