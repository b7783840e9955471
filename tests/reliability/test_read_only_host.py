"""The read-only host a second app falls back to: it shows the store and changes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from filelock import FileLock

from forkwise.core.client.client import Client
from forkwise.core.errors import ReadOnlyStore
from forkwise.core.host.host import Host
from forkwise.core.host.shared_store import StoreEndpoint


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.asyncio
async def test_read_only_host_reads_and_refuses_every_write(store: Path) -> None:
    writer = Host.open(store, default_cwd=str(store))
    client = await Client.in_process(writer)
    sid = (await client.create_session("kept"))["id"]
    idle = (await client.create_session("idle"))["id"]
    await client.prompt_and_wait(sid, "first")
    await client.close()
    await writer.close()
    # a turn left open, as by a writer that is still running it
    log = store / "sessions" / f"{sid}.jsonl"
    last = int(log.read_bytes().splitlines()[-1].split(b'"seq":')[1].split(b",")[0])
    log.write_bytes(
        log.read_bytes()
        + b'{"seq":%d,"type":"turn/start","ts":"2026-01-01T00:00:00.000Z","turn":"turn:open"}\n'
        % (last + 1)
    )
    lock = FileLock(str(store / "writer.lock"), timeout=0)
    lock.acquire()  # another process is the writer
    try:
        before = digest(store)
        reader = Host.open(store, read_only=True, default_cwd=str(store))
        assert reader.read_only
        assert await StoreEndpoint.start(reader, store) is None  # only a writer serves
        client = await Client.in_process(reader)
        try:
            rows = await client.list_sessions()
            assert sorted(r["id"] for r in rows) == sorted([sid, idle])
            info = await client.get_session(sid)
            assert info["state"]["running"]  # the open turn is not "recovered" by a reader
            for attempt in (
                client.create_session("new"),
                client.fork(sid),
                client.attach("elsewhere", sid),
                client.set_model(idle, "offline", "forkwise-offline"),
                client.prompt_and_wait(idle, "not saved"),
            ):
                with pytest.raises(ReadOnlyStore):
                    await attempt
        finally:
            await client.close()
            await reader.close()
        assert digest(store) == before
    finally:
        lock.release()
