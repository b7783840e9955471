"""A fork made here of an imported session learns when a re-import rewrote its source
below the fork point: the source's lines it copied are no longer there."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from codex_fixtures import basic, thread_id

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host


def test_a_reimport_that_rewrites_the_source_shows_in_its_fork(tmp_path: Path) -> None:
    async def scenario() -> None:
        home = tmp_path / "codex"
        rollout = basic(7)
        path = rollout.write(home)
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        try:
            report = await client.import_files([str(path)], "codex")
            sid = f"codex-{thread_id(7)}"
            assert report["imported"] == [sid]
            child = await client.fork(sid)
            assert (await client.get_session(child["id"]))["source"]["changed"] is False
            # the agent's file grows: the fork's prefix is still there
            rollout.prompt("one more question")
            rollout.answer("One more answer.", item_id="msg_more")
            rollout.write(home)
            os.utime(path, None)
            assert (await client.import_files([str(path)], "codex"))["updated"] == [sid]
            assert (await client.get_session(child["id"]))["source"]["changed"] is False
            # the agent's file is rewritten below the fork point (an earlier answer changed)
            data = path.read_bytes().replace(b"There are two files.", b"There are 3 files.")
            path.write_bytes(data)
            os.utime(path, None)
            assert (await client.import_files([str(path)], "codex"))["updated"] == [sid]
            assert (await client.get_session(child["id"]))["source"]["changed"] is True
        finally:
            await client.close()
            await host.close()

    asyncio.run(scenario())
