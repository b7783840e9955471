"""`session.search` over every carrier: a word found in a session written here, in one
imported from a file, gone with a deleted session; the index beside the store is reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Env, LogBuilder, open_env, write_log


@pytest.mark.asyncio
async def test_search_finds_words_in_new_and_imported_sessions(env: Env, tmp_path: Path) -> None:
    s = await env.client.create_session("Lemur planning")
    outcome = await env.client.prompt_and_wait(s["id"], "where do the lemurs sleep?")
    assert outcome["status"] == "completed"
    hits = await env.client.search("lemurs")
    assert [(h["sessionId"], h["kind"]) for h in hits][-1] == (s["id"], "user")
    assert all(h["title"] == "Lemur planning" for h in hits)
    assert any("«lemurs»" in h["snippet"] for h in hits)

    # a session imported from a file (a Forkwise log elsewhere on disk)
    log = LogBuilder()
    log.turn("t1", "the pangolin question")
    outside = tmp_path / "outside"
    path = write_log(outside, "imported-one", log.records)
    report = await env.client.import_files([str(path)], tool="forkwise")
    assert report["failed"] == []
    hits = await env.client.search("pangolin")
    imported = {h["sessionId"] for h in hits}
    assert len(imported) == 1
    hit = next(h for h in hits if h["kind"] == "user")
    assert hit["seq"] == 2
    assert hit["messageId"] == "user:t1:0001"
    assert hit["ts"]

    await env.client.delete_session(next(iter(imported)))
    assert await env.client.search("pangolin") == []
    assert await env.client.search("   ") == []


@pytest.mark.asyncio
async def test_the_index_is_kept_beside_the_store_and_reused(tmp_path: Path,
                                                             sock_dir: Path) -> None:
    async with open_env("inproc", tmp_path, sock_dir) as env:
        s = await env.client.create_session("keep")
        await env.client.prompt_and_wait(s["id"], "the ocelot sleeps")
        assert len(await env.client.search("ocelot")) == 2  # question and echoed reply
        index = env.store_dir / "search.sqlite"
        assert index.exists()
    async with open_env("inproc", tmp_path, sock_dir) as env:
        await env.client.prompt_and_wait(s["id"], "another ocelot")
        # the reopened index caught up from the logs, then took the new turn as it came
        assert len(await env.client.search("ocelot")) == 4
        assert env.host.search_index.ready
