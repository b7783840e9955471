"""The host's replay checkpoints: what a session's context and messages are, and how its
next turn goes on, do not depend on whether they came from a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.replay_cache import ReplayCache
from forkwise.core.store.session_store import SessionStore

from .conftest import Recorder


def replays(root: Path, *, writable: bool) -> ReplayCache:
    return ReplayCache(root / "replay", writable=writable, min_events=20, refresh_events=10)


def library_context(root: Path, sid: str) -> list[dict[str, object]]:
    """The transcript a full fold of the log on disk gives (no host, no checkpoint)."""
    store = SessionStore(JsonlBackend(root, writable=False))
    try:
        return [dict(m) for m in store.get(sid).replay().transcript]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_context_messages_and_the_next_turn_are_the_same_from_a_checkpoint(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    host = Host.open(root, replays=replays(root, writable=True))
    client = await Client.in_process(host, follow=False)
    try:
        sid = (await client.create_session("long", str(tmp_path)))["id"]
        for n in range(6):
            assert (await client.prompt_and_wait(sid, f"question {n}"))["status"] == "completed"
        context = await client.context(sid)
        messages = await client.messages(sid)
    finally:
        await client.close()
        await host.close()
    checkpoint = root / "replay" / f"{sid}.json"
    assert checkpoint.is_file()  # the writer's replay left one
    assert context["messages"] == library_context(root, sid)

    # a reader takes the checkpoint
    reader = Host.open(root, read_only=True, replays=replays(root, writable=False))
    client = await Client.in_process(reader, follow=False)
    try:
        assert reader.replays._load(reader.store.get(sid)) is not None
        assert await client.context(sid) == context
        assert await client.messages(sid) == messages
    finally:
        await client.close()
        await reader.close()

    # the next turn after reopening goes on from it, and the session deleted drops it
    host = Host.open(root, replays=replays(root, writable=True))
    client = await Client.in_process(host, follow=False)
    try:
        assert (await client.prompt_and_wait(sid, "one more"))["status"] == "completed"
        after = await client.context(sid)
        assert after["messages"][: len(context["messages"])] == context["messages"]
        assert after["messages"][-2]["content"] == "one more"
        assert after["messages"] == library_context(root, sid)
        await client.call("session.delete", {"sessionId": sid})
        assert not checkpoint.exists()
    finally:
        await client.close()
        await host.close()


@pytest.mark.asyncio
async def test_a_first_prompt_streams_before_the_checkpoint_it_makes_is_written(
    tmp_path: Path,
) -> None:
    """A long session never checkpointed (an imported one): its first prompt folds the log,
    streams, and writes the checkpoint once the turn is over, of the log as the fold found
    it; a reply's first words do not wait on that write."""
    root = tmp_path / "store"
    host = Host.open(root, replays=ReplayCache(None, writable=False))  # keeps none
    client = await Client.in_process(host, follow=False)
    try:
        sid = (await client.create_session("long", str(tmp_path)))["id"]
        for n in range(6):
            assert (await client.prompt_and_wait(sid, f"question {n}"))["status"] == "completed"
        before = (await client.events(sid))[-1]["seq"]
    finally:
        await client.close()
        await host.close()
    checkpoint = root / "replay" / f"{sid}.json"
    assert not checkpoint.exists()

    host = Host.open(root, replays=replays(root, writable=True))
    client = await Client.in_process(host)
    on_delta: list[bool] = []
    seen = Recorder()

    def note(n: dict[str, Any]) -> None:
        if n["kind"] == "session/delta" and not on_delta:
            on_delta.append(checkpoint.exists())
        seen(n)

    try:
        await client.subscribe(note)
        assert (await client.prompt_and_wait(sid, "one more"))["status"] == "completed"
        await seen.wait_for(lambda n: n["kind"] == "session/turn" and not n["running"])
        assert on_delta == [False]  # streamed before it was written
        assert checkpoint.is_file()  # and written after the turn
        covered = host.replays._load(host.store.get(sid))
        assert covered is not None
        assert covered.last_seq == before
        assert (await client.context(sid))["messages"] == library_context(root, sid)
    finally:
        await client.close()
        await host.close()
