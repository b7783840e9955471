"""Undo of a delete: `session.restore` brings a deleted session back from the store's
trash, byte for byte, listed, searchable and announced again."""

from __future__ import annotations

import pytest

from forkwise.core.errors import DuplicateSessionId, SourceNotFound
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session_store import SessionStore

from .conftest import Env, Recorder


@pytest.mark.asyncio
async def test_a_deleted_session_comes_back_from_the_trash(env: Env) -> None:
    s = await env.client.create_session("Keep the quetzal notes")
    await env.client.prompt_and_wait(s["id"], "the quetzal question")
    path = env.store_dir / "sessions" / f"{s['id']}.jsonl"
    before = path.read_bytes()
    seen = Recorder()
    await env.client.subscribe(seen)

    await env.client.delete_session(s["id"])
    assert not path.exists()
    assert len(list((env.store_dir / "trash").glob(f"{s['id']}.*.jsonl"))) == 1
    assert s["id"] not in {r["id"] for r in await env.client.list_sessions()}
    assert await env.client.search("quetzal") == []

    row = await env.client.restore_session(s["id"])
    assert row["id"] == s["id"]
    assert row["title"] == "Keep the quetzal notes"
    assert path.read_bytes() == before  # the same file, moved back
    assert list((env.store_dir / "trash").glob(f"{s['id']}.*.jsonl")) == []
    assert s["id"] in {r["id"] for r in await env.client.list_sessions()}
    assert {h["sessionId"] for h in await env.client.search("quetzal")} == {s["id"]}
    await seen.wait_for(lambda n: n["kind"] == "catalogue/upsert"
                        and n["summary"]["id"] == s["id"])
    outcome = await env.client.prompt_and_wait(s["id"], "and it goes on")
    assert outcome["status"] == "completed"

    with pytest.raises(DuplicateSessionId):
        await env.client.restore_session(s["id"])
    with pytest.raises(SourceNotFound):
        await env.client.restore_session("never-was")


def test_the_memory_backend_keeps_its_trash_too() -> None:
    store = SessionStore(MemoryBackend())
    sid = store.create("m", meta={"title": "t"}).id
    store.append(sid, [{"type": "session/title", "title": "renamed"}])
    store.delete(sid)
    assert not store.exists(sid)
    back = store.restore(sid)
    assert [e.type for e in back.events] == ["session/title"]
    assert store.summary(sid).title == "renamed"
    with pytest.raises(SourceNotFound):
        store.restore("other")
