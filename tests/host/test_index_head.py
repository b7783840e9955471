"""The index's head (`index-head.json`): the first page of a list by activity, taken by
`indexed_rows(store, newest)` only while `index.json` is the file it was made from; the
rows are the ones the whole index gives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from forkwise.core.client.local import indexed_rows, open_store, save_index_head
from forkwise.core.store.backends import index_head
from forkwise.core.store.backends.index_head import HEAD_NAME, read_head

from .conftest import lineage_store

Rows = list[dict[str, object]]


def whole_index_rows(store: Path, newest: int) -> Rows:
    """`indexed_rows` with the head moved aside: what the whole index gives."""
    head = store / HEAD_NAME
    aside = store.parent / "head-aside.json"
    if head.exists():
        head.rename(aside)
    try:
        return indexed_rows(store, newest)
    finally:
        if aside.exists():
            aside.rename(head)


@pytest.mark.asyncio
async def test_the_head_gives_the_rows_of_the_whole_index(tmp_path: Path) -> None:
    store = tmp_path / "store"
    await lineage_store(store)
    expected = {n: whole_index_rows(store, n) for n in range(5)}
    assert save_index_head(store)
    assert read_head(store / "index.json", 3) is not None
    for n in range(5):
        assert indexed_rows(store, n) == expected[n], n
    made = (store / HEAD_NAME).stat().st_ino
    assert save_index_head(store)  # of this index already: left as it is
    assert (store / HEAD_NAME).stat().st_ino == made

    logs = sorted((store / "sessions").glob("*.jsonl"))
    st = logs[0].stat()
    os.utime(logs[0], ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # changed behind it
    assert read_head(store / "index.json", 3) is not None  # the index itself is the same
    for n in range(5):
        rows = indexed_rows(store, n)
        assert rows == whole_index_rows(store, n), n
        assert logs[0].stem not in {row["id"] for row in rows}  # each log still checked


@pytest.mark.asyncio
async def test_the_head_is_what_is_read(tmp_path: Path) -> None:
    """While it names the current index, the rows come from the head (an entry edited in
    it shows), not from the whole index."""
    store = tmp_path / "store"
    newest = (await lineage_store(store))[0][2]
    assert save_index_head(store)
    head = store / HEAD_NAME
    data = orjson.loads(head.read_bytes())
    data["entries"][newest]["summary"][6] = "from the head"
    head.write_bytes(orjson.dumps(data))
    assert indexed_rows(store, 1)[0]["title"] == "from the head"
    assert whole_index_rows(store, 1)[0]["title"] == "newest"


@pytest.mark.asyncio
async def test_a_head_of_an_index_replaced_since_is_not_taken(tmp_path: Path) -> None:
    store = tmp_path / "store"
    await lineage_store(store)
    assert save_index_head(store)
    old_head = (store / HEAD_NAME).read_bytes()
    opened = await open_store(store, serve=False)
    try:
        latest = (await opened.client.create_session("after the head"))["id"]
        await opened.client.prompt_and_wait(latest, "a question")
    finally:
        await opened.close()
    # the host wrote a head of its index; the one made before (of the index replaced
    # since) put back, as a crash between the two writes would leave it
    assert read_head(store / "index.json", 1) is not None
    (store / HEAD_NAME).write_bytes(old_head)
    assert read_head(store / "index.json", 1) is None
    rows = indexed_rows(store, 1)
    assert [row["id"] for row in rows] == [latest]
    assert rows == whole_index_rows(store, 1)


@pytest.mark.asyncio
async def test_a_head_short_of_the_page_asked_for_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    await lineage_store(store)
    (store / HEAD_NAME).unlink()  # the one its host wrote, of HEAD_TOPS as it is
    monkeypatch.setattr(index_head, "HEAD_TOPS", 1)  # a store with more tops than it holds
    assert save_index_head(store)
    assert read_head(store / "index.json", 1) is not None
    assert read_head(store / "index.json", 2) is None
    for n in range(5):
        assert indexed_rows(store, n) == whole_index_rows(store, n), n


@pytest.mark.asyncio
async def test_tops_the_head_runs_out_of_come_from_the_whole_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head whose tops' logs changed since gives no first page short of `newest`: the
    next tops come from the whole index, as without a head."""
    store = tmp_path / "store"
    ids, _listed = await lineage_store(store)
    (store / HEAD_NAME).unlink()  # the one its host wrote, of HEAD_TOPS as it is
    monkeypatch.setattr(index_head, "HEAD_TOPS", 1)
    assert save_index_head(store)
    newest = store / "sessions" / f"{ids[2]}.jsonl"
    st = newest.stat()
    os.utime(newest, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # changed behind it
    assert read_head(store / "index.json", 1) is not None
    rows = indexed_rows(store, 1)
    assert rows == whole_index_rows(store, 1)
    assert rows
    assert ids[2] not in {row["id"] for row in rows}


def test_no_head_without_an_index_and_a_broken_head_is_passed_over(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "sessions").mkdir(parents=True)
    assert not save_index_head(store)
    assert not (store / HEAD_NAME).exists()
    assert not save_index_head("postgresql://localhost/forkwise")
    (store / "index.json").write_bytes(b'{"version": 1, "sessions": {}}')
    (store / HEAD_NAME).write_bytes(b"{not json")
    assert read_head(store / "index.json", 1) is None
    assert indexed_rows(store, 1) == []


@pytest.mark.asyncio
async def test_after_a_cli_command_the_preview_reads_the_head_not_the_index(
    tmp_path: Path,
) -> None:
    """Any process that rewrites `index.json` writes its head too: after a CLI command
    (a fork: the index is rewritten) the app's next start takes the head. The index is
    then made unreadable in place (same inode, size and mtime: the head still names it);
    the preview's rows come whole from the head all the same."""
    store = tmp_path / "store"
    ids, _listed = await lineage_store(store)
    index = store / "index.json"
    before = index.stat().st_ino
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "forkwise.core.cli",
            "sessions",
            "fork",
            "--store",
            str(store),
            ids[0],
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert index.stat().st_ino != before  # the CLI rewrote the index
    assert read_head(index, 3) is not None
    expected = {n: indexed_rows(store, n) for n in range(1, 5)}
    assert len(expected[4]) == 6  # three tops, a fork of a fork beneath one, the new fork

    st = index.stat()
    with open(index, "r+b") as f:  # garbage of the same size, the same file
        f.write(b"x" * st.st_size)
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert whole_index_rows(store, 4) == []  # what reading the index would give now
    for n in range(1, 5):
        assert indexed_rows(store, n) == expected[n], n
