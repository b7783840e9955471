"""The search index holds the full text of every session: it is 0600 like the logs, a
link, FIFO or folder in its place is never written through, waited on or kept, and a
query a person would not type is refused before it holds the index. Each case runs a
host in a process of its own with a deadline (a FIFO opened by SQLite never returns)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.reliability.conftest import child_env

QUICK = 30.0
SCRIPT = """
import asyncio, sys, orjson
from forkwise.core.host.host import Host
from forkwise.core.errors import ForkwiseError

async def main():
    host = Host.open(sys.argv[1])
    try:
        if not await host.list_sessions():
            await host.create_session(title="needle in the haystack", cwd="/")
        try:
            hits = await host.search(sys.stdin.read())
            print(orjson.dumps({"hits": [h["sessionId"] for h in hits]}).decode())
        except ForkwiseError as exc:
            print(orjson.dumps({"error": exc.code}).decode())
    finally:
        await host.close()

asyncio.run(main())
"""


def search(store: Path, query: str = "needle") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(store)], input=query, capture_output=True, text=True,
        timeout=QUICK, env=child_env(), check=False, preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = orjson.loads(done.stdout)
    return found


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert len(search(root)["hits"]) == 1  # type: ignore[arg-type]
    return root


def test_the_index_is_private(store: Path) -> None:
    for name in ("search.sqlite", "search.sqlite-wal", "search.sqlite-shm"):
        path = store / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, (name, oct(path.stat().st_mode))


def test_an_index_made_public_is_made_private(store: Path) -> None:
    os.chmod(store / "search.sqlite", 0o644)
    assert len(search(store)["hits"]) == 1  # type: ignore[arg-type]
    assert stat.S_IMODE((store / "search.sqlite").stat().st_mode) == 0o600


def test_a_link_fifo_or_folder_in_the_index_s_place(store: Path, tmp_path: Path) -> None:
    index = store / "search.sqlite"
    victim = tmp_path / "victim"
    victim.write_bytes(b"someone else's file\n")
    for plant in ("link", "fifo", "folder"):
        for suffix in ("", "-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
        if plant == "link":
            index.symlink_to(victim)
        elif plant == "fifo":
            os.mkfifo(index)
        else:
            index.mkdir()
            (index / "kept").write_text("a person's file")
        assert search(store)["hits"] == [search(store)["hits"][0]], plant  # type: ignore[index]
        assert stat.S_ISREG(os.lstat(index).st_mode), plant
        assert victim.read_bytes() == b"someone else's file\n"
    aside = [p for p in store.iterdir() if p.name.startswith("search.sqlite.aside-")]
    assert [(p / "kept").read_text() for p in aside] == ["a person's file"]


def test_a_query_no_person_types_is_refused(store: Path) -> None:
    assert search(store, " ".join(["word"] * 100_000)) == {"error": "query-too-long"}
    assert search(store, "x" * 1001) == {"error": "query-too-long"}
    assert len(search(store, " ".join(["needle"] * 32))["hits"]) == 1  # type: ignore[arg-type]
