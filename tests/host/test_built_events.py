"""Every event the runtime appends holds, in memory, the fields a reader of its line gets:
the same values of the same types (Event.build copies a plain payload instead of decoding
its line; see core/log/plain_json.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typed_json import same_json

from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

from .conftest import open_env


@pytest.mark.asyncio
async def test_every_event_type_the_runtime_appends_is_what_its_line_reads_back(
    tmp_path: Path, sock_dir: Path
) -> None:
    async with open_env("inproc", tmp_path, sock_dir) as env:
        (env.work / "notes.txt").write_text("remember the milk\n")
        client = env.client
        s = (await client.create_session("kinds"))["id"]
        await client.rename_session(s, "all the kinds")
        await client.set_model(s, "offline", "forkwise-offline")
        assert (await client.prompt_and_wait(s, "hello"))["status"] == "completed"
        waiting = await client.prompt_and_wait(s, '/tool read_file {"path": "notes.txt"}')
        approval = waiting["approvals"][0]["approval"]
        assert (await client.approve_and_wait(s, approval, True))["status"] == "completed"
        waiting = await client.prompt_and_wait(s, '/tool list_dir {"path": "."}')
        approval = waiting["approvals"][0]["approval"]
        assert (await client.approve_and_wait(s, approval, False))["status"] == "completed"
        assert (await client.prompt_and_wait(s, "/fail no"))["status"] == "failed"
        waiting = await client.prompt_and_wait(s, '/tool list_dir {"path": "."}')
        await client.cancel(s)
        built = env.host.store.get(s).events
        store_dir = env.store_dir
    read = SessionStore(JsonlBackend(store_dir)).get(s).events
    kinds = {event.type for event in built}
    assert {
        "model/select", "session/title", "turn/start", "turn/end", "step/start", "step/end",
        "message", "tool/result", "approval/request", "approval/resolve",
    } <= kinds
    assert len(built) == len(read)
    for mine, theirs in zip(built, read, strict=True):
        assert (mine.seq, mine.type, mine.ts, mine.raw) == (
            theirs.seq, theirs.type, theirs.ts, theirs.raw,
        )
        assert same_json(dict(mine.fields), dict(theirs.fields)), mine.type

