"""Stop keeps what was streamed: the cancelled turn's partial answer is in the log as its
assistant message, so the transcript, a fork and the next turn's replay all see it."""

from __future__ import annotations

import pytest

from forkwise.core.runtime import deltas as deltas_module
from forkwise.core.runtime.providers import offline as offline_module

from .conftest import Env, Recorder


def _streamed(seen: Recorder, sid: str) -> str:
    return "".join(n["text"] for n in seen.of_kind("session/delta") if n["sessionId"] == sid)


@pytest.mark.asyncio
async def test_stop_keeps_the_streamed_part_as_the_assistant_message(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offline_module, "SLOW_DELAY", 0.02)
    monkeypatch.setattr(deltas_module, "DELTA_INTERVAL", 0.001)
    s = await env.client.create_session("stop me")
    sid = s["id"]
    seen = Recorder()
    await env.client.subscribe(seen)
    words = " ".join(f"word{i}" for i in range(200))
    await env.client.prompt(sid, f"/slow {words}")
    # a few words are on screen, far from the end of the reply
    await seen.wait_for(lambda _n: _streamed(seen, sid).count("word") >= 3)
    await env.client.cancel(sid)

    events = env.events(sid)
    assert [e["type"] for e in events[-4:]] == ["step/start", "message", "step/end", "turn/end"]
    assert events[-1]["status"] == "cancelled"
    partial = events[-3]
    assert partial["role"] == "assistant"
    assert partial["partial"] is True
    text = partial["parts"][0]["text"]
    assert "word0 word1 word2" in text
    assert "word199" not in text  # stopped midway, not the whole reply
    assert text == _streamed(seen, sid)  # exactly what the person read

    messages = await env.client.messages(sid)
    assert [(m["role"], m["text"]) for m in messages][-1] == ("assistant", text)

    child = await env.client.fork(sid)  # the cancelled turn is a completed bracket
    child_messages = await env.client.messages(child["id"])
    assert child_messages[-1]["text"] == text


@pytest.mark.asyncio
async def test_the_next_turn_is_replayed_with_the_partial_answer(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offline_module, "SLOW_DELAY", 0.02)
    s = await env.client.create_session("then go on")
    sid = s["id"]
    seen = Recorder()
    await env.client.subscribe(seen)
    await env.client.prompt(sid, "/slow " + " ".join(f"w{i}" for i in range(100)))
    await seen.wait_for(lambda n: n["kind"] == "session/delta" and n["sessionId"] == sid)
    await env.client.cancel(sid)
    partial = [e for e in env.events(sid) if e.get("partial")]
    assert len(partial) == 1
    outcome = await env.client.prompt_and_wait(sid, "go on")
    assert outcome["status"] == "completed"
    roles = [m["role"] for m in await env.client.messages(sid)]
    assert roles == ["user", "assistant", "user", "assistant"]


@pytest.mark.asyncio
async def test_stop_before_any_text_writes_no_empty_message(env: Env) -> None:
    s = await env.client.create_session("waiting")
    outcome = await env.client.prompt_and_wait(s["id"], '/tool list_dir {"path": "."}')
    assert outcome["status"] == "waiting"
    await env.client.cancel(s["id"])
    assert not [e for e in env.events(s["id"]) if e.get("partial")]
