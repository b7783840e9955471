"""The agent runtime over every carrier: turns, streaming, the prompt queue, cancel,
failures, approvals (also across a host restart), crash recovery, tools and subagents."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from held_flush import HeldFlushes

from forkwise.core.client.client import Client
from forkwise.core.errors import ApprovalNotFound, SessionBusy
from forkwise.core.host.host import Host
from forkwise.core.runtime import deltas as deltas_module
from forkwise.core.runtime.providers import offline as offline_module
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.offline import OfflineProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

from .conftest import TIMEOUT, Env, GateProvider, LogBuilder, Recorder, open_env, write_log


def types(env: Env, sid: str) -> list[str]:
    return [e["type"] for e in env.events(sid)]


@pytest.mark.asyncio
async def test_a_turn_streams_deltas_and_persists_the_whole_message(env: Env) -> None:
    s = await env.client.create_session("hello", cwd=str(env.work))
    assert s["model"] == "forkwise-offline"
    first = env.events(s["id"])[0]
    assert first["type"] == "model/select"
    assert first["offline"] is True
    assert "offline" in first["label"].lower()
    seen = Recorder()
    await env.client.subscribe(seen)
    queued = await env.client.prompt(s["id"], "hello there")
    assert queued == {"queued": 0}
    await seen.wait_for(
        lambda n: n["kind"] == "session/turn" and n["sessionId"] == s["id"] and not n["running"]
    )
    assert types(env, s["id"]) == [
        "model/select",
        "session/title",  # the title it was created with
        "turn/start",
        "message",
        "step/start",
        "message",
        "step/end",
        "turn/end",
    ]
    assert env.events(s["id"])[1]["title"] == "hello"
    reply = env.events(s["id"])[5]
    deltas = "".join(n["text"] for n in seen.of_kind("session/delta"))
    assert deltas == reply["parts"][0]["text"]
    assert len(seen.of_kind("session/delta")) <= 2  # a reply that is there at once
    assert env.events(s["id"])[-1]["status"] == "completed"
    appended = [e for n in seen.of_kind("session/events") for e in n["events"]]
    assert [e["seq"] for e in appended] == list(range(3, 9))
    assert env.client.catalogue[s["id"]]["messages"] == 2
    assert env.client.catalogue[s["id"]]["running"] is False


class BurstProvider:
    """Streams its reply as many small pieces, as fast as it can, yielding to the loop
    between pieces as a network stream would."""

    name = "burst"
    PIECES = 200

    async def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        pieces = [f"p{i} " for i in range(self.PIECES)]
        for piece in pieces:
            await asyncio.sleep(0)
            yield TextDelta(piece)
        yield StepResult(text="".join(pieces))


class KeptStreamProvider:
    """Keeps a reference to every stream it hands out, so nothing but an explicit close
    ends one; after its result the stream would go on waiting, as a network stream whose
    connection is still open does."""

    name = "kept"

    def __init__(self) -> None:
        self.streams: list[AsyncIterator[StepItem]] = []
        self.closed = 0

    def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        stream = self._stream()
        self.streams.append(stream)
        return stream

    async def _stream(self) -> AsyncIterator[StepItem]:
        try:
            yield TextDelta("kept")
            yield StepResult(text="kept")
            await asyncio.Event().wait()
        finally:
            self.closed += 1


@pytest.mark.asyncio
async def test_the_provider_stream_is_closed_once_its_result_is_in(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    provider = KeptStreamProvider()
    providers = {"offline": OfflineProvider(), "kept": provider}
    async with open_env(carrier, tmp_path, sock_dir, providers=providers) as env:
        s = await env.client.create_session("kept")
        await env.client.set_model(s["id"], "kept", "k")
        for n in (1, 2):
            outcome = await env.client.prompt_and_wait(s["id"], f"turn {n}")
            assert outcome["status"] == "completed"
            assert outcome["reply"] == "kept"
            assert (len(provider.streams), provider.closed) == (n, n)


def streamed(seen: Recorder, sid: str) -> list[str]:
    return [n["text"] for n in seen.of_kind("session/delta") if n["sessionId"] == sid]


async def reply_of(env: Env, sid: str) -> str:
    return str([e for e in env.events(sid) if e["type"] == "message"][-1]["parts"][0]["text"])


@pytest.mark.asyncio
@pytest.mark.parametrize("interval", [3600.0, 0.0])
async def test_fast_streams_are_coalesced_into_few_deltas(
    carrier: str, tmp_path: Path, sock_dir: Path, monkeypatch: pytest.MonkeyPatch, interval: float
) -> None:
    # a long interval: the first piece goes out at once, the rest joined before the
    # message is written; no interval: every piece goes out as it comes
    monkeypatch.setattr(deltas_module, "DELTA_INTERVAL", interval)
    providers = {"offline": OfflineProvider(), "burst": BurstProvider()}
    async with open_env(carrier, tmp_path, sock_dir, providers=providers) as env:
        s = await env.client.create_session("burst")
        await env.client.set_model(s["id"], "burst", "b")
        seen = Recorder()
        await env.client.subscribe(seen)
        outcome = await env.client.prompt_and_wait(s["id"], "go")
        assert outcome["status"] == "completed"
        await seen.wait_for(
            lambda n: (
                n["kind"] == "session/events" and any(e["type"] == "turn/end" for e in n["events"])
            )
        )
        texts = streamed(seen, s["id"])
        assert "".join(texts) == await reply_of(env, s["id"]) == outcome["reply"]
        if interval:
            assert texts == ["p0 ", "".join(f"p{i} " for i in range(1, BurstProvider.PIECES))]
        else:
            assert len(texts) == BurstProvider.PIECES
        # no delta comes after the message that holds the whole text
        mine = [n for n in seen.notes if n.get("sessionId") == s["id"]]
        message = next(
            i
            for i, n in enumerate(mine)
            if n["kind"] == "session/events"
            and any(e["type"] == "message" and e["role"] == "assistant" for e in n["events"])
        )
        assert all(n["kind"] != "session/delta" for n in mine[message:])


@pytest.mark.asyncio
async def test_slow_replies_still_stream_word_by_word(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offline_module, "SLOW_DELAY", 0.01)
    monkeypatch.setattr(deltas_module, "DELTA_INTERVAL", 0.002)
    s = await env.client.create_session("slow")
    seen = Recorder()
    await env.client.subscribe(seen)
    outcome = await env.client.prompt_and_wait(s["id"], "/slow a few words")
    assert outcome["status"] == "completed"
    texts = streamed(seen, s["id"])
    assert "".join(texts) == outcome["reply"]
    assert texts == [w + " " for w in outcome["reply"].split(" ")[:-1]] + [
        outcome["reply"].split(" ")[-1]
    ]


@pytest.mark.asyncio
async def test_a_plain_turn_costs_one_store_worker_call(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = await env.client.create_session("calls")
    await env.client.prompt_and_wait(s["id"], "warm up")  # the agent exists and has read
    calls: list[str] = []
    io, session_io = env.host.io, env.host.session_io

    async def counted(fn: Any, *args: Any) -> Any:
        calls.append(getattr(fn, "__name__", repr(fn)))
        return await io(fn, *args)

    async def counted_session(sid: str, fn: Any, *args: Any) -> Any:
        calls.append(getattr(fn, "__name__", repr(fn)))
        return await session_io(sid, fn, *args)

    monkeypatch.setattr(env.host, "io", counted)
    monkeypatch.setattr(env.host, "session_io", counted_session)
    for text in ("one", "two"):
        outcome = await env.client.prompt_and_wait(s["id"], text)
        assert outcome["status"] == "completed"
    # the offline model answers at once: the turn's opening goes with its end, in one
    # write per turn, started on the loop and only flushed on the worker; no extra reads
    assert calls == ["flush_append"] * 2


@pytest.mark.asyncio
async def test_a_turn_waiting_on_its_flush_holds_up_no_other_session(tmp_path: Path) -> None:
    backend = HeldFlushes(JsonlBackend(tmp_path / "store"), held="")
    host = Host(SessionStore(backend))  # type: ignore[arg-type]  # wraps a real backend
    client = await Client.in_process(host)
    try:
        slow = (await client.create_session("slow"))["id"]
        fast = (await client.create_session("fast"))["id"]
        backend.held = slow
        waiting = asyncio.ensure_future(client.prompt_and_wait(slow, "held"))
        flushing = asyncio.get_running_loop().run_in_executor(None, backend.flushing.wait)
        assert await asyncio.wait_for(flushing, TIMEOUT)
        # the other session runs whole turns while the first one's write waits on the disk
        for text in ("one", "two"):
            outcome = await asyncio.wait_for(client.prompt_and_wait(fast, text), TIMEOUT)
            assert outcome["status"] == "completed"
        assert not waiting.done()
        backend.release.set()
        assert (await asyncio.wait_for(waiting, TIMEOUT))["status"] == "completed"
    finally:
        backend.release.set()
        await client.close()
        await host.close()


@pytest.mark.asyncio
async def test_the_next_turn_sees_changes_made_between_turns(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    providers = {"offline": OfflineProvider(), "burst": BurstProvider()}
    async with open_env(carrier, tmp_path, sock_dir, providers=providers) as env:
        s = await env.client.create_session("between")
        first = await env.client.prompt_and_wait(s["id"], "first")
        await env.client.set_model(s["id"], "burst", "b")  # not written by the agent
        second = await env.client.prompt_and_wait(s["id"], "second")
        assert second["reply"] != first["reply"]
        starts = [e for e in env.events(s["id"]) if e["type"] == "step/start"]
        assert [(e["provider"], e["model"]) for e in starts] == [
            ("offline", "forkwise-offline"),
            ("burst", "b"),
        ]
        # replace in place drops the second turn; the next one follows the shorter log
        user = [e for e in env.events(s["id"]) if e["type"] == "message" and e["role"] == "user"]
        await env.client.fork_at_message(
            s["id"], user[1]["id"], include_message=False, replace=True
        )
        third = await env.client.prompt_and_wait(s["id"], "third")
        assert third["status"] == "completed"
        users = [
            e["parts"][0]["text"]
            for e in env.events(s["id"])
            if e["type"] == "message" and e["role"] == "user"
        ]
        assert users == ["first", "third"]
        assert [e["seq"] for e in env.events(s["id"])] == list(
            range(1, len(env.events(s["id"])) + 1)
        )


@pytest.mark.asyncio
async def test_offline_replies_are_deterministic(env: Env) -> None:
    a = await env.client.create_session()
    b = await env.client.create_session()
    ra = await env.client.prompt_and_wait(a["id"], "same words")
    rb = await env.client.prompt_and_wait(b["id"], "same words")
    assert ra["reply"] == rb["reply"]
    assert "same words" in ra["reply"]


@pytest.mark.asyncio
async def test_prompts_queue_in_order_and_block_replace(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    gate = GateProvider()
    providers = {"offline": OfflineProvider(), "gate": gate}
    async with open_env(carrier, tmp_path, sock_dir, providers=providers) as env:
        s = await env.client.create_session("queue")
        await env.client.set_model(s["id"], "gate", "held")
        assert (await env.client.prompt(s["id"], "one"))["queued"] == 0
        await asyncio.wait_for(gate.started.wait(), TIMEOUT)
        assert (await env.client.prompt(s["id"], "two"))["queued"] == 1
        assert (await env.client.prompt(s["id"], "three"))["queued"] == 2
        info = await env.client.get_session(s["id"])
        assert info["state"] == {"running": True, "queued": 2, "waiting": False}
        first_user = (await env.client.messages(s["id"]))[0]["id"]
        with pytest.raises(SessionBusy):
            await env.client.fork_at_message(s["id"], first_user, replace=True)
        with pytest.raises(SessionBusy):
            await env.client.set_model(s["id"], "offline", "forkwise-offline")
        seen = Recorder()
        await env.client.subscribe(seen)
        gate.release.set()
        await seen.wait_for(
            lambda n: n["kind"] == "session/turn" and not n["running"] and n["queued"] == 0
        )
        users = [m["text"] for m in await env.client.messages(s["id"]) if m["role"] == "user"]
        assert users == ["one", "two", "three"]
        ends = [e["status"] for e in env.events(s["id"]) if e["type"] == "turn/end"]
        assert ends == ["completed"] * 3


@pytest.mark.asyncio
async def test_cancel_while_streaming(carrier: str, tmp_path: Path, sock_dir: Path) -> None:
    gate = GateProvider()
    providers = {"offline": OfflineProvider(), "gate": gate}
    async with open_env(carrier, tmp_path, sock_dir, providers=providers) as env:
        s = await env.client.create_session("cancel")
        await env.client.set_model(s["id"], "gate", "held")
        await env.client.prompt(s["id"], "never finishes")
        await env.client.prompt(s["id"], "queued, dropped by cancel")
        await asyncio.wait_for(gate.started.wait(), TIMEOUT)
        await env.client.cancel(s["id"])
        last = env.events(s["id"])[-1]
        assert (last["type"], last["status"]) == ("turn/end", "cancelled")
        assert types(env, s["id"]).count("turn/start") == 1
        # the streamed part stays as the cancelled turn's answer
        messages = await env.client.messages(s["id"])
        assert [(m["role"], m["text"]) for m in messages] == [
            ("user", "never finishes"), ("assistant", "holding ")]
        info = await env.client.get_session(s["id"])
        assert info["state"] == {"running": False, "queued": 0, "waiting": False}


@pytest.mark.asyncio
async def test_cancel_while_waiting_for_approval(env: Env) -> None:
    s = await env.client.create_session("cancel approval")
    outcome = await env.client.prompt_and_wait(s["id"], '/tool list_dir {"path": "."}')
    assert outcome["status"] == "waiting"
    await env.client.cancel(s["id"])
    assert env.events(s["id"])[-1]["status"] == "cancelled"
    with pytest.raises(ApprovalNotFound):
        await env.client.approve(s["id"], outcome["approvals"][0]["approval"], True)


@pytest.mark.asyncio
async def test_provider_failure_fails_the_turn_with_its_text(env: Env) -> None:
    s = await env.client.create_session("fail")
    outcome = await env.client.prompt_and_wait(s["id"], "/fail the endpoint said no")
    assert outcome["status"] == "failed"
    last = env.events(s["id"])[-1]
    assert (last["status"], last["error"]) == ("failed", "the endpoint said no")
    assert (await env.client.prompt_and_wait(s["id"], "again"))["status"] == "completed"


@pytest.mark.asyncio
async def test_tool_call_waits_for_approval_then_continues(env: Env) -> None:
    (env.work / "notes.txt").write_text("remember the milk\n")
    s = await env.client.create_session("tools")
    outcome = await env.client.prompt_and_wait(s["id"], '/tool read_file {"path": "notes.txt"}')
    assert outcome["status"] == "waiting"
    [request] = outcome["approvals"]
    assert (request["tool"], request["args"]) == ("read_file", {"path": "notes.txt"})
    info = await env.client.get_session(s["id"])
    assert info["state"]["waiting"] is True
    assert info["pendingApprovals"] == [request]
    done = await env.client.approve_and_wait(s["id"], request["approval"], True)
    assert done["status"] == "completed"
    assert "remember the milk" in done["reply"]
    [result] = [e for e in env.events(s["id"]) if e["type"] == "tool/result"]
    assert result["isError"] is False
    assert result["output"]["text"] == "remember the milk\n"


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../x"])
async def test_file_tools_refuse_paths_outside_cwd(env: Env, path: str) -> None:
    (env.work.parent / "outside.txt").write_text("secret")
    s = await env.client.create_session("confined")
    call = "/tool read_file " + orjson.dumps({"path": path}).decode()
    outcome = await env.client.prompt_and_wait(s["id"], call)
    done = await env.client.approve_and_wait(s["id"], outcome["approvals"][0]["approval"], True)
    assert done["status"] == "completed"
    [result] = [e for e in env.events(s["id"]) if e["type"] == "tool/result"]
    assert result["isError"] is True
    assert "outside the session directory" in result["output"]
    assert "secret" not in str(env.events(s["id"]))


@pytest.mark.asyncio
async def test_denied_tool_call_is_not_run(env: Env) -> None:
    s = await env.client.create_session("deny")
    outcome = await env.client.prompt_and_wait(s["id"], '/tool list_dir {"path": "."}')
    done = await env.client.approve_and_wait(s["id"], outcome["approvals"][0]["approval"], False)
    assert done["status"] == "completed"
    resolve = next(e for e in env.events(s["id"]) if e["type"] == "approval/resolve")
    assert resolve["decision"] == "denied"
    result = next(e for e in env.events(s["id"]) if e["type"] == "tool/result")
    assert result["isError"] is True
    assert "denied" in result["output"]


@pytest.mark.asyncio
async def test_crashed_turn_is_interrupted_but_waiting_turn_survives_restart(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha")
    crashed = LogBuilder()
    crashed.turn("t1", "done before the crash")
    crashed.add("turn/start", turn="t2")
    crashed.add(
        "message",
        id="user:t2:0001",
        role="user",
        turn="t2",
        parts=[{"type": "text", "text": "cut off"}],
    )
    crashed.add("step/start", turn="t2", step="s1", provider="offline", model="m")
    waiting = LogBuilder()
    waiting.turn("t1", "hello")
    approval = waiting.waiting_turn("t2", "list_dir", {"path": "."})
    store = tmp_path / "store"
    crashed_path = write_log(store, "crashed", crashed.records, cwd=str(work))
    waiting_path = write_log(store, "waiting", waiting.records, cwd=str(work))
    crashed_before = crashed_path.read_bytes()
    waiting_before = waiting_path.read_bytes()

    async with open_env(carrier, tmp_path, sock_dir) as env:
        await env.client.get_session("crashed")
        lines = crashed_path.read_bytes()
        assert lines.startswith(crashed_before)  # earlier lines never rewritten
        step_end, last = env.events("crashed")[-2:]
        assert (step_end["seq"], step_end["type"], step_end["step"]) == (8, "step/end", "s1")
        assert (last["seq"], last["type"], last["status"]) == (9, "turn/end", "interrupted")
        info = await env.client.get_session("waiting")
        assert info["state"]["waiting"] is True
        assert [a["approval"] for a in info["pendingApprovals"]] == [approval]
        assert waiting_path.read_bytes() == waiting_before

    assert waiting_path.read_bytes() == waiting_before  # a clean shutdown keeps it open
    async with open_env(carrier, tmp_path, sock_dir) as env:
        await env.client.get_session("crashed")
        assert len(env.events("crashed")) == 9  # the closed turn needs no more recovery
        done = await env.client.approve_and_wait("waiting", approval, True)
        assert done["status"] == "completed"
        assert "a.txt" in done["reply"]
        tail = [e["type"] for e in env.events("waiting")[len(waiting.records) :]]
        assert tail == [
            "approval/resolve",
            "tool/result",
            "step/end",
            "step/start",
            "message",
            "step/end",
            "turn/end",
        ]
        assert waiting_path.read_bytes().startswith(waiting_before)


@pytest.mark.asyncio
async def test_delegate_starts_a_clipped_subagent_child(env: Env) -> None:
    s = await env.client.create_session("parent")
    await env.client.prompt_and_wait(s["id"], "background")
    completed = len(env.events(s["id"]))
    outcome = await env.client.prompt_and_wait(s["id"], '/tool delegate {"task": "look into it"}')
    assert outcome["status"] == "waiting"
    done = await env.client.approve_and_wait(s["id"], outcome["approvals"][0]["approval"], True)
    assert done["status"] == "completed"
    result = next(e for e in env.events(s["id"]) if e["type"] == "tool/result")
    child = result["output"]["session"]
    assert result["output"]["status"] == "completed"
    assert "look into it" in result["output"]["reply"]
    summary = env.client.catalogue[child]
    assert summary["relation"] == "subagent"
    assert summary["parentSession"] == s["id"]
    assert summary["seedLength"] == completed  # clipped to the last completed turn
    child_events = env.events(child)
    assert child_events[completed]["type"] == "history/fork"
    assert child_events[completed]["relation"] == "subagent"
    assert child_events[completed + 1]["type"] == "model/select"
    users = [m["text"] for m in await env.client.messages(child) if m["role"] == "user"]
    assert users == ["background", "look into it"]


@pytest.mark.asyncio
async def test_listing_closes_crashed_turns_and_keeps_waiting_ones(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    """A session list shows no session as running that nothing runs."""
    crashed = LogBuilder()
    crashed.turn("t1", "fine")
    crashed.add("turn/start", turn="t2")
    waiting = LogBuilder()
    approval = waiting.waiting_turn("t1", "list_dir", {"path": "."})
    store = tmp_path / "store"
    write_log(store, "crashed", crashed.records)
    waiting_path = write_log(store, "waiting", waiting.records)
    waiting_before = waiting_path.read_bytes()
    async with open_env(carrier, tmp_path, sock_dir) as env:
        rows = {r["id"]: r for r in await env.client.list_sessions()}
        assert rows["crashed"]["running"] is False
        last = env.events("crashed")[-1]
        assert (last["type"], last["status"]) == ("turn/end", "interrupted")
        assert rows["waiting"]["running"] is True
        assert waiting_path.read_bytes() == waiting_before
        info = await env.client.get_session("waiting")
        assert [a["approval"] for a in info["pendingApprovals"]] == [approval]
