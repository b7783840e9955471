"""The rename verb and the fork's prefix digest, over a real JSONL store and the client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.client.client import Client
from forkwise.core.errors import InvalidBoundary
from forkwise.core.host.host import Host
from forkwise.core.log.digest import DIGEST_FIELD, digest_lines


def lines(path: Path) -> list[bytes]:
    return [x for x in path.read_bytes().splitlines() if x.strip()]


async def two_turns(client: Client) -> str:
    row = await client.create_session(title="Digest me")
    sid = row["id"]
    await client.prompt_and_wait(sid, "first question")
    await client.prompt_and_wait(sid, "second question")
    return str(sid)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_rename_writes_a_title_event_that_survives_a_restart(tmp_path: Path) -> None:
    async def scenario() -> None:
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        sid = await two_turns(client)
        row = await client.rename_session(sid, "  Plan   the 2.5 release — fork 2 ")
        assert row["title"] == "Plan the 2.5 release — fork 2"
        assert client.catalogue[sid]["title"] == row["title"]
        with pytest.raises(InvalidBoundary):
            await client.rename_session(sid, "   ")
        await client.close()
        await host.close()
        last = orjson.loads(lines(tmp_path / "store" / "sessions" / f"{sid}.jsonl")[-1])
        assert last["type"] == "session/title"
        assert last["title"] == "Plan the 2.5 release — fork 2"
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        assert client.catalogue[sid]["title"] == "Plan the 2.5 release — fork 2"
        await client.close()
        await host.close()

    run(scenario())


def test_a_title_taken_away_names_the_session_as_before(tmp_path: Path) -> None:
    """The Undo of a first rename: the session has no title of its own again (titleSet
    false, named by its first question), after a restart too; the transcript shows no
    empty title row. A blank title is still refused."""

    async def scenario() -> None:
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        row = await client.create_session()
        sid = row["id"]
        await client.prompt_and_wait(sid, "first question")
        await client.rename_session(sid, "Named")
        row = await client.rename_session(sid, None)
        assert (row["title"], row["titleSet"]) == ("first question", False)
        with pytest.raises(InvalidBoundary):
            await client.rename_session(sid, "")
        events = await client.events(sid)
        assert events[-1]["type"] == "session/title"
        assert events[-1]["title"] == ""
        from forkwise.core.reading.entries import TITLE, build

        assert [e.text for e in build(events).entries if e.kind == TITLE] == ["Named"]
        await client.close()
        await host.close()
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        again = client.catalogue[sid]
        assert (again["title"], again["titleSet"]) == ("first question", False)
        await client.close()
        await host.close()

    run(scenario())


def test_fork_records_the_digest_of_the_copied_bytes(tmp_path: Path) -> None:
    async def scenario() -> None:
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        sid = await two_turns(client)
        source_path = tmp_path / "store" / "sessions" / f"{sid}.jsonl"
        messages = await client.messages(sid)
        second = next(m for m in messages if "second" in str(m.get("text")))
        child = await client.fork_at_message(sid, second["id"], include_message=False)
        whole = await client.fork(sid)
        for row in (child, whole):
            path = tmp_path / "store" / "sessions" / f"{row['id']}.jsonl"
            child_lines = lines(path)
            b = orjson.loads(child_lines[0])["seedLength"]
            fork_event = orjson.loads(child_lines[b + 1])
            assert fork_event["type"] == "history/fork"
            # independently: the digest of the source file's first b event lines
            assert fork_event[DIGEST_FIELD] == digest_lines(lines(source_path)[1 : b + 1])
            info = await client.get_session(row["id"])
            assert info["source"] == {"sourceId": sid, "changed": False, "missing": False}
        # the source grows: the children's prefix is unchanged
        await client.prompt_and_wait(sid, "third question")
        assert (await client.get_session(child["id"]))["source"]["changed"] is False
        # replace in place below the first child's point: it changed for that child only
        first = next(m for m in messages if "first" in str(m.get("text")))
        await client.truncate(sid, first["id"], include_message=True)
        assert (await client.get_session(child["id"]))["source"]["changed"] is False
        assert (await client.get_session(whole["id"]))["source"]["changed"] is True
        await client.prompt_and_wait(sid, "another second question")
        assert (await client.get_session(whole["id"]))["source"]["changed"] is True
        assert (await client.get_session(sid))["source"] is None
        await client.delete_session(sid)
        gone = (await client.get_session(child["id"]))["source"]
        assert gone == {"sourceId": sid, "changed": None, "missing": True}
        await client.close()
        await host.close()

    run(scenario())


def test_indexed_fork_records_the_same_digest(tmp_path: Path) -> None:
    """A fork made from the index (the source not read) hashes the span it copies."""

    async def scenario() -> None:
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        sid = await two_turns(client)
        await client.close()
        await host.close()
        host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
        client = await Client.in_process(host)
        assert sid not in host.store._records  # nothing has read the source yet
        row = await client.fork(sid)
        assert sid not in host.store._records  # the index served the fork
        source_path = tmp_path / "store" / "sessions" / f"{sid}.jsonl"
        child_lines = lines(tmp_path / "store" / "sessions" / f"{row['id']}.jsonl")
        b = orjson.loads(child_lines[0])["seedLength"]
        fork_event = orjson.loads(child_lines[b + 1])
        assert fork_event[DIGEST_FIELD] == digest_lines(lines(source_path)[1 : b + 1])
        assert (await client.get_session(row["id"]))["source"]["changed"] is False
        await client.close()
        await host.close()

    run(scenario())
