"""`indexed_rows`: the catalogue rows a window shows from the store's index before its host
is up. They are the host's rows for every log the index still matches, and nothing for a
log it does not (changed behind it, or new); no lock is taken and nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forkwise.core.client.local import indexed_rows, open_store
from forkwise.core.demo import build_demo_store

from .conftest import lineage_store


async def host_rows(store: Path) -> dict[str, dict[str, object]]:
    opened = await open_store(store, serve=False)
    try:
        return {row["id"]: row for row in await opened.client.list_sessions()}
    finally:
        await opened.close()


@pytest.mark.asyncio
async def test_the_index_rows_are_the_listing_for_the_logs_it_matches(tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    listed = await host_rows(store)  # the host lists: the index is written and current
    assert len(listed) >= 3
    sessions = store / "sessions"
    changed, gone = sorted(listed)[:2]
    st = (sessions / f"{changed}.jsonl").stat()
    os.utime(sessions / f"{changed}.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    (sessions / f"{gone}.jsonl").unlink()
    index_before = (store / "index.json").read_bytes()

    rows = {row["id"]: row for row in indexed_rows(store)}

    assert set(rows) == set(listed) - {changed, gone}
    for sid, row in rows.items():
        expected = dict(listed[sid], running=False)
        if row["model"] is None:  # the model a session without one gets: the host's word
            expected["model"] = expected["provider"] = None
        assert row == expected, sid
    assert any(row["parentSession"] for row in rows.values())  # the lineage comes with them
    assert (store / "index.json").read_bytes() == index_before  # a read: nothing saved


def test_no_rows_without_an_index_or_a_folder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    (store / "index.json").unlink()
    assert indexed_rows(store) == []
    assert not (store / "index.json").exists()  # nothing was built for it
    assert indexed_rows(tmp_path / "missing") == []
    assert not (tmp_path / "missing").exists()
    assert indexed_rows("postgresql://localhost/forkwise") == []
    assert indexed_rows(None) == []


@pytest.mark.asyncio
async def test_newest_reads_the_first_page_of_a_list_by_activity(tmp_path: Path) -> None:
    """`newest=N`: the N most recently active sessions at the top of their lineage and
    everything beneath them, however old; a session beneath one the index does not vouch
    for is left out with it."""
    store = tmp_path / "store"
    ids, rows = await lineage_store(store)
    oldest, older, newest, fork, fork_of_fork = ids
    listed = {row["id"]: row for row in rows}

    def ids_of(n: int) -> set[str]:
        return {row["id"] for row in indexed_rows(store, n)}

    assert ids_of(1) == {newest}
    assert ids_of(2) == {newest, older, fork, fork_of_fork}
    assert oldest not in ids_of(2)
    assert ids_of(3) == set(listed)
    assert ids_of(0) == set()
    assert {row["id"]: row for row in indexed_rows(store, 3)} == {
        sid: dict(row, running=False) for sid, row in listed.items()}

    log = store / "sessions" / f"{fork}.jsonl"
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # changed behind it
    assert ids_of(2) == {newest, older}  # its fork too: where it goes is not known yet
    (store / "sessions" / f"{newest}.jsonl").unlink()
    assert ids_of(1) == {older}  # the next one takes its place
