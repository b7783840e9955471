"""The notification kinds (`forkwise.core.notifications`) are what a real host sends: a
session's life through a client on every carrier (create, a streamed offline turn,
truncate, import, delete) and a listing that reads logs, each notification held to its
kind's TypedDict field by field; and the client drops what is none of them."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.notifications import KINDS, Notification, received

from .conftest import Env, Recorder

_SHAPES = {get_type_hints(t)["kind"].__args__[0]: t for t in get_args(Notification)}


def _fits(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin is Literal:
        return value in get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in get_args(hint))
    if origin is not None:
        return isinstance(value, origin)
    if hint in (int, str, bool):
        return type(value) is hint  # an int field is not a bool, nor the other way
    return isinstance(value, hint)


def check(note: dict[str, Any]) -> None:
    """`note` has exactly the fields of its kind's TypedDict, each of the declared type."""
    assert note["kind"] in KINDS, note
    shape = _SHAPES[note["kind"]]
    hints = get_type_hints(shape)
    assert set(note) == set(hints), (note["kind"], sorted(note), sorted(hints))
    for key, hint in hints.items():
        assert _fits(note[key], hint), (note["kind"], key, note[key], hint)


@pytest.mark.asyncio
async def test_every_notification_a_host_sends_is_its_kind_s_typeddict(
    env: Env, tmp_path: Path
) -> None:
    from forkwise.core.bench.synth_sources import claude_projects

    seen = Recorder()
    await env.client.subscribe(seen)
    s = await env.client.create_session("hello", cwd=str(env.work))
    await env.client.prompt(s["id"], "hello there")
    await seen.wait_for(
        lambda n: n["kind"] == "session/turn" and n["sessionId"] == s["id"] and not n["running"]
    )
    await env.client.prompt(s["id"], "and again")
    await seen.wait_for(lambda n: n["kind"] == "session/turn" and not n["running"]
                        and len(seen.of_kind("session/delta")) >= 2)  # fmt: skip
    first_answer = next(
        m["id"] for m in await env.client.messages(s["id"]) if m["role"] == "assistant"
    )
    await env.client.truncate(s["id"], first_answer)
    home = tmp_path / "claude-home"
    claude_projects(home, sessions=2, turns=1, seed=3)
    await env.client.import_files([str(home)], "claude")
    # the search index, built in the background after the import
    await seen.wait_for(lambda n: n["kind"] == "search/indexing" and n["done"] == n["total"])
    await env.client.delete_session(s["id"])
    await seen.wait_for(lambda n: n["kind"] == "catalogue/remove")

    kinds = {n["kind"] for n in seen.notes}
    # (sources/warnings: test_source_warnings_are_told_once_per_change)
    assert kinds == KINDS - {"store/indexing", "sources/warnings"}, kinds
    for note in seen.notes:
        check(note)


@pytest.mark.asyncio
async def test_a_listing_that_reads_logs_sends_indexing_notifications(tmp_path: Path) -> None:
    from forkwise.core.bench.synth import write_store

    root = write_store(tmp_path / "store", 300, 5)  # logs, no index yet
    host = Host.open(root)
    client = await Client.in_process(host, follow=False)
    seen = Recorder()
    try:
        await client.subscribe(seen)
        await client.follow()
    finally:
        await client.close()
        await host.close()
    assert seen.of_kind("store/indexing")
    assert seen.of_kind("store/indexing")[-1]["done"] == 300
    for note in seen.notes:
        check(note)


def test_the_client_takes_only_the_kinds_it_knows_with_their_fields() -> None:
    delta = {"kind": "session/delta", "sessionId": "s", "turn": "t", "text": "hi"}
    assert received(delta) is delta
    assert received({"kind": "session/delta", "sessionId": "s", "turn": "t"}) is None
    assert received({"kind": "session/unknown", "sessionId": "s"}) is None
    assert received({"sessionId": "s"}) is None
    assert received({"kind": 3}) is None


@pytest.mark.asyncio
async def test_source_warnings_are_told_once_per_change(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watched Claude Code file with a torn line: the first pass answers `sources.watch`
    with it; a later pass tells `sources/warnings` only when the file changed."""
    import asyncio
    import os
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
    import claude_fixtures as cf

    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    chat = cf.Transcript(cf.SID)
    chat.exchange("first question", "first answer")
    chat.exchange("second question", "second answer")
    path = cf.write_old(chat, claude)
    lines = path.read_bytes().splitlines(keepends=True)
    torn = b'{"parentUuid": "x", "type": "us\n'
    path.write_bytes(b"".join(lines[:2]) + torn + b"".join(lines[2:]))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    seen = Recorder()
    await env.client.subscribe(seen)
    listed = await env.client.watch_sources(["claude"])
    assert [w["path"] for w in listed["warnings"]] == [str(path)]
    env.host.sources.interval = 0.05

    async def whole_look() -> None:
        """One more pass over the whole tree, the file unchanged: a new folder makes the
        kernel's follower look at the trees whole (a poll looks every interval)."""
        start = env.host.sources.passes
        (claude / "projects" / f"poke-{start}").mkdir(parents=True)
        for _ in range(400):
            if env.host.sources.passes > start:
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the watch made no pass")

    await whole_look()
    assert seen.of_kind("sources/warnings") == []  # the first pass's are in the answer
    before = len(chat.entries)
    chat.exchange("third question", "third answer")
    with open(path, "ab") as fh:
        fh.write(torn + b"".join(cf.orjson.dumps(e) + b"\n" for e in chat.entries[before:]))
    os.utime(path, (1_700_000_100, 1_700_000_100))
    await seen.wait_for(lambda n: n["kind"] == "sources/warnings")
    await whole_look()
    (note,) = seen.of_kind("sources/warnings")
    check(note)
    assert {w["path"] for w in note["warnings"]} == {str(path)}
    assert len(note["warnings"]) == 2  # both torn lines of the file read again
    await env.client.watch_sources([])
