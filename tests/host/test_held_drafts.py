"""The drafts that open a step are held back for the step's own write (runtime/held_drafts.py):
a turn whose model answers at once is one write and one flush, nothing of it reaches a
client before that flush, a step that waits writes its opening on its own first, and a
write that comes in between makes the agent replay the log again."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from held_flush import HeldFlushes

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.offline import OfflineProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import SessionStore

from .conftest import TIMEOUT, GateProvider, Recorder, open_env

TURN = ["turn/start", "message", "step/start", "message", "step/end", "turn/end"]


def mine(seen: Recorder, sid: str) -> list[dict[str, Any]]:
    return [n for n in seen.notes if n.get("sessionId") == sid]


def appended_types(notes: list[dict[str, Any]]) -> list[list[str]]:
    return [[e["type"] for e in n["events"]] for n in notes if n["kind"] == "session/events"]


@pytest.mark.asyncio
async def test_an_at_once_turn_is_one_write_told_only_after_its_flush(tmp_path: Path) -> None:
    backend = HeldFlushes(JsonlBackend(tmp_path / "store"), held="")
    host = Host(SessionStore(backend))  # type: ignore[arg-type]  # wraps a real backend
    client = await Client.in_process(host)
    try:
        sid = (await client.create_session("held"))["id"]
        seen = Recorder()
        await client.subscribe(seen)
        backend.held = sid
        waiting = asyncio.ensure_future(client.prompt_and_wait(sid, "hello"))
        flushing = asyncio.get_running_loop().run_in_executor(None, backend.flushing.wait)
        assert await asyncio.wait_for(flushing, TIMEOUT)
        # a later write's note marks the point: whatever the held turn would have sent
        # early was sent before it (notes go out in order)
        marker = (await client.create_session("marker"))["id"]
        await seen.wait_for(lambda n: n["kind"] == "catalogue/upsert"
                            and n["summary"]["id"] == marker)
        # the whole turn is written, not yet flushed: no client has heard of any of it
        lines = (tmp_path / "store" / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
        assert len(lines) == 1 + 2 + len(TURN)  # header, model and title, the turn
        assert not waiting.done()
        assert appended_types(mine(seen, sid)) == []
        assert not [n for n in seen.of_kind("catalogue/upsert") if n["summary"]["messages"]]
        backend.release.set()
        outcome = await asyncio.wait_for(waiting, TIMEOUT)
        assert outcome["status"] == "completed"
        notes = mine(seen, sid)
        assert appended_types(notes) == [TURN]  # one write: one note, in order
        kinds = [n["kind"] for n in notes]
        # the streamed text goes out before the write that holds it, never after
        assert kinds.index("session/delta") < kinds.index("session/events")
        delta = "".join(n["text"] for n in notes if n["kind"] == "session/delta")
        assert delta == outcome["reply"]
    finally:
        backend.release.set()
        await client.close()
        await host.close()


@pytest.mark.asyncio
async def test_a_step_that_waits_writes_its_opening_on_its_own_first(tmp_path: Path) -> None:
    gate = GateProvider()
    providers = {"offline": OfflineProvider(), "gate": gate}
    async with open_env("inproc", tmp_path, tmp_path, providers=providers) as env:
        sid = (await env.client.create_session("gate"))["id"]
        await env.client.set_model(sid, "gate", "held")
        seen = Recorder()
        await env.client.subscribe(seen)
        done = asyncio.ensure_future(env.client.prompt_and_wait(sid, "one"))
        await asyncio.wait_for(gate.started.wait(), TIMEOUT)
        # the model is asked and waits: the opening is flushed (and told) meanwhile
        await seen.wait_for(lambda n: n["kind"] == "session/events" and n["sessionId"] == sid)
        assert appended_types(mine(seen, sid)) == [TURN[:3]]
        assert [e["type"] for e in env.events(sid)][-3:] == TURN[:3]
        # the gate streamed a piece before it waited: it goes out after the prompt is told,
        # so a client that drops its stream row when a message comes loses none of it
        await seen.wait_for(lambda n: n["kind"] == "session/delta" and n["sessionId"] == sid)
        kinds = [n["kind"] for n in mine(seen, sid)]
        assert kinds.index("session/events") < kinds.index("session/delta")
        assert not done.done()
        gate.release.set()
        outcome = await asyncio.wait_for(done, TIMEOUT)
        assert outcome["reply"] == "released: one"
        assert appended_types(mine(seen, sid)) == [TURN[:3], TURN[3:]]
        streamed = "".join(n["text"] for n in mine(seen, sid) if n["kind"] == "session/delta")
        assert streamed == "holding "  # what the gate streamed; its result text is its own


class InterruptingProvider:
    """Answers at once; on the first step another write (three titles) reaches the log
    while the step's opening is held back, so the opening lands three seqs later than the
    agent's replay assumed. Keeps every transcript it is given."""

    name = "interrupting"

    def __init__(self) -> None:
        self.host: Host | None = None
        self.session = ""
        self.transcripts: list[list[Mapping[str, Any]]] = []

    async def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        self.transcripts.append([dict(m) for m in transcript])
        if len(self.transcripts) == 1:
            assert self.host is not None
            titles = [{"type": "session/title", "title": f"t{i}"} for i in range(3)]
            self.host.store.append(self.session, titles)
        text = f"reply {len(self.transcripts)}"
        yield TextDelta(text)
        yield StepResult(text=text)


@pytest.mark.asyncio
async def test_a_write_between_hold_and_write_makes_the_agent_replay_again(
    tmp_path: Path,
) -> None:
    provider = InterruptingProvider()
    providers = {"offline": OfflineProvider(), "interrupting": provider}
    async with open_env("inproc", tmp_path, tmp_path, providers=providers) as env:
        sid = (await env.client.create_session("between"))["id"]
        await env.client.set_model(sid, "interrupting", "i")
        provider.host, provider.session = env.host, sid
        for text in ("first", "second"):
            outcome = await env.client.prompt_and_wait(sid, text)
            assert outcome["status"] == "completed"
        types = [e["type"] for e in env.events(sid)]
        assert types[-len(TURN) * 2 - 3 : -len(TURN)] == ["session/title"] * 3 + TURN
        # the second step saw each message once, as a replay of the log gives them
        said = [(m["role"], m["content"]) for m in provider.transcripts[1]]
        assert said == [("user", "first"), ("assistant", "reply 1"), ("user", "second")]
        assert (await env.client.get_session(sid))["summary"]["title"] == "t2"


@pytest.mark.asyncio
async def test_state_notes_are_one_per_turn_of_the_loop(tmp_path: Path) -> None:
    gate = GateProvider()
    providers = {"offline": OfflineProvider(), "gate": gate}
    async with open_env("inproc", tmp_path, tmp_path, providers=providers) as env:
        sid = (await env.client.create_session("notes"))["id"]
        seen = Recorder()
        await env.client.subscribe(seen)

        def states() -> list[tuple[bool, int]]:
            notes = mine(seen, sid)
            return [(n["running"], n["queued"]) for n in notes if n["kind"] == "session/turn"]

        # queued and started in the same turn of the loop (the agent has read the log
        # already): one note says it runs
        for text in ("warm up", "plain"):
            seen.notes.clear()
            assert (await env.client.prompt_and_wait(sid, text))["status"] == "completed"
            await seen.wait_for(lambda n: n["kind"] == "session/turn" and not n["running"])
        assert states() == [(True, 0), (False, 0)]
        # a prompt queued behind a running turn is told as queued, in its own note
        await env.client.set_model(sid, "gate", "held")
        seen.notes.clear()
        first = asyncio.ensure_future(env.client.prompt_and_wait(sid, "one"))
        await asyncio.wait_for(gate.started.wait(), TIMEOUT)
        second = asyncio.ensure_future(env.client.prompt_and_wait(sid, "two"))
        await seen.wait_for(lambda n: n["kind"] == "session/turn" and n["queued"] == 1)
        gate.release.set()
        for done in (first, second):
            assert (await asyncio.wait_for(done, TIMEOUT))["status"] == "completed"
        await seen.wait_for(lambda n: n["kind"] == "session/turn" and not n["running"])
        # queued, then started when the first turn ended, then idle: a note for each
        assert states()[-3:] == [(True, 1), (True, 0), (False, 0)]


@pytest.mark.asyncio
async def test_a_write_in_flight_when_the_host_closes_is_finished_and_indexed(
    tmp_path: Path,
) -> None:
    """The agent starts a turn's write on the loop and is cancelled (the host closes)
    while its flush is under way: the write is still committed (`settle_append`), so
    what the store held and the index it leaves behind agree with the file."""
    backend = HeldFlushes(JsonlBackend(tmp_path / "store"), held="")
    host = Host(SessionStore(backend))  # type: ignore[arg-type]  # wraps a real backend
    client = await Client.in_process(host)
    try:
        sid = (await client.create_session("closing"))["id"]
        assert (await client.prompt_and_wait(sid, "warm up"))["status"] == "completed"
        backend.held = sid
        waiting = asyncio.ensure_future(client.prompt_and_wait(sid, "hello"))
        flushing = asyncio.get_running_loop().run_in_executor(None, backend.flushing.wait)
        assert await asyncio.wait_for(flushing, TIMEOUT)
        # the close blocks the loop while it drains the workers: let go from a thread
        threading.Timer(0.2, backend.release.set).start()
        await asyncio.wait_for(host.close(), TIMEOUT)
        outcome = await asyncio.wait_for(waiting, TIMEOUT)
        assert outcome["status"] in ("completed", "interrupted")
    finally:
        backend.release.set()
        await client.close()
        await host.close()
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    snap = store.get(sid)
    # what the closed host's store held of it in the end is what is on disk
    assert host.store.get(sid).last_seq == snap.last_seq
    types = [e.type for e in snap.events]
    assert types.count("turn/start") == 2
    assert types[-len(TURN) :] == TURN  # the turn, whole, once
    (row,) = [r for r in store.list() if r.id == sid]
    assert row == SessionSummary.start(snap.header).fold(snap.events)
    store.close()
