"""A host on a shared store (PostgreSQL) sees what other hosts change, as they commit:
sessions created, forked, grown and deleted reach its clients as catalogue notes, and its
own copies of those sessions are read again."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from polling import note_until

from forkwise.core.host.host import Host

OTHER_HOST = textwrap.dedent(
    """
    import sys
    from forkwise.core.store.backends.postgres import PostgresBackend
    from forkwise.core.store.session_store import SessionStore

    store = SessionStore(PostgresBackend(sys.argv[1]))
    step = sys.argv[2]
    if step == "create":
        store.create("theirs", meta={"title": "made elsewhere"})
        store.append("theirs", [{"type": "plugin/x/y", "n": 1}])
    elif step == "grow":
        store.append("theirs", [{"type": "plugin/x/y", "n": 2}, {"type": "plugin/x/y", "n": 3}])
        store.fork("theirs", 2, "their-fork")
    elif step == "delete":
        store.delete("their-fork")
    store.close()
    """
)


def other_host(url: str, step: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OTHER_HOST, url, step],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def upsert_of(sid: str, events: int) -> Any:
    def test(note: dict[str, Any]) -> bool:
        row = note.get("summary") or {}
        return bool(
            note["kind"] == "catalogue/upsert" and row["id"] == sid and row["events"] == events
        )

    return test


@pytest.mark.asyncio
async def test_a_host_sees_sessions_others_create_fork_grow_and_delete(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    host = Host.open(pg_url, default_cwd=str(tmp_path))
    notes: list[dict[str, Any]] = []
    host.subscribe(notes.append)
    try:
        assert await host.io(host.store.ids) == []  # the host's loop is known from here on
        await asyncio.to_thread(other_host, pg_url, "create")
        created = await note_until(notes, upsert_of("theirs", 1))
        assert created["summary"]["title"] == "made elsewhere"
        assert (await host.io(host.store.get, "theirs")).last_seq == 1  # read now: loaded
        await asyncio.to_thread(other_host, pg_url, "grow")
        await note_until(notes, upsert_of("theirs", 3))
        fork = await note_until(notes, upsert_of("their-fork", 3))
        assert fork["summary"]["parentSession"] == "theirs"
        # the loaded copy was dropped: reading it again gives the grown log
        assert (await host.io(host.store.get, "theirs")).last_seq == 3
        await asyncio.to_thread(other_host, pg_url, "delete")
        await note_until(notes, lambda n: n == {"kind": "catalogue/remove", "sessionId": "their-fork"})
        assert await host.io(host.store.ids) == ["theirs"]
        # the host's own writes are announced once, by its own store, not again by the server
        before = len(notes)
        await host.io(host.store.create, "mine")
        await asyncio.sleep(1.5)
        assert [n["summary"]["id"] for n in notes[before:]] == ["mine"]
    finally:
        await host.close()
