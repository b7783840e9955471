"""Continuing a Codex session on OpenAI's Responses API sends Codex's encrypted reasoning
back: each reasoning item, with its summary and encrypted content and without its id, in
its place before the call or answer it preceded; the request stores nothing and asks for
the new reasoning encrypted, which is then sent back on the next turn. Chat Completions
and the other vendors never get it. Against a stand-in on 127.0.0.1 with the real SDK."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server
from vendor_streams import responses_stream

from forkwise.core.cli import main as cli
from forkwise.core.log.events import Event
from forkwise.core.log.replay import replay
from forkwise.core.runtime.providers import anthropic_wire, openai_wire

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
import codex_fixtures

KEY = "sk-openai-standin-0123456789"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def forked(path: Path, sid: str, store: Path) -> str:
    code, _, err = await asyncio.to_thread(
        run, "sessions", "import", "--from", "codex", str(path), "--store", str(store))
    assert code == 0, err
    code, out, err = await asyncio.to_thread(
        run, "sessions", "fork", sid, "--store", str(store), "--json")
    assert code == 0, err
    child: str = orjson.loads(out)["child"]
    return child


async def prompt(store: Path, sid: str, text: str) -> str:
    code, out, err = await asyncio.to_thread(
        run, "sessions", "prompt", sid, text, "--store", str(store))
    assert code == 0, err
    return out.strip()


def after(items: list[dict[str, Any]], index: int) -> dict[str, Any]:
    return items[index + 1]


@pytest.fixture
def openai_env(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.mark.asyncio
@pytest.mark.usefixtures("openai_env")
async def test_codex_reasoning_goes_back_encrypted_before_the_call_it_preceded(
    server: Server, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    path = codex_fixtures.basic().write(tmp_path / "codex")
    child = await forked(path, f"codex-{codex_fixtures.thread_id(1)}", store)

    server.stream(responses_stream(text="Next, run the tests.",
                                   reasoning=("**Choosing** the next step", "gAAAAnew-0001")),
                  done=False)
    assert await prompt(store, child, "what now?") == "Next, run the tests."
    body = server.requests[0].json()
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    items = body["input"]
    kept = [(i, item) for i, item in enumerate(items) if item.get("type") == "reasoning"]
    assert [item for _, item in kept] == [
        {"type": "reasoning", "summary": [{"type": "summary_text",
                                           "text": "**Planning** list the files"}],
         "encrypted_content": "gAAAA0001"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Fixing**"}],
         "encrypted_content": "gAAAA0002"},
    ]
    # in place: each right before the call its turn made next
    assert [after(items, i).get("call_id") for i, _ in kept] == ["call_ls", "call_patch"]

    # the reply's own reasoning came back encrypted: it goes with the next request
    server.stream(responses_stream(text="Done."), done=False)
    assert await prompt(store, child, "thanks") == "Done."
    items = server.requests[1].json()["input"]
    mine = [i for i, item in enumerate(items)
            if item.get("encrypted_content") == "gAAAAnew-0001"]
    assert len(mine) == 1
    assert items[mine[0]]["summary"] == [{"type": "summary_text",
                                          "text": "**Choosing** the next step"}]
    assert after(items, mine[0]) == {
        "role": "assistant", "content": [{"type": "output_text", "text": "Next, run the tests."}]}


@pytest.mark.asyncio
@pytest.mark.usefixtures("openai_env")
async def test_reasoning_without_a_summary_goes_back_too(server: Server, tmp_path: Path) -> None:
    r = codex_fixtures.Rollout(codex_fixtures.thread_id(7)).meta()
    r.event("task_started", turn_id="turn-7", model_context_window=272000)
    r.context("gpt-5-codex", "medium")
    r.prompt("hello")
    r.item("reasoning", id="rs_sealed", summary=[], content=None, encrypted_content="gAAAAsealed")
    r.answer("Hi.", item_id="msg_7")
    r.event("task_complete", turn_id="turn-7", last_agent_message="Hi.")
    path = r.write(tmp_path / "codex")
    child = await forked(path, f"codex-{codex_fixtures.thread_id(7)}", tmp_path / "store")
    server.stream(responses_stream(text="Sure."), done=False)
    assert await prompt(tmp_path / "store", child, "go on") == "Sure."
    items = server.requests[0].json()["input"]
    (at,) = [i for i, item in enumerate(items) if item.get("type") == "reasoning"]
    assert items[at] == {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAsealed"}
    assert after(items, at)["content"] == [{"type": "output_text", "text": "Hi."}]


@pytest.mark.asyncio
@pytest.mark.usefixtures("openai_env")
async def test_reasoning_openai_cannot_verify_is_left_out_once_and_the_turn_answers(
    server: Server, tmp_path: Path
) -> None:
    """Encrypted reasoning is bound to the organisation it was made for: a Codex session
    signed in with ChatGPT, continued with an API key, gets it refused."""
    store = tmp_path / "store"
    path = codex_fixtures.basic().write(tmp_path / "codex")
    child = await forked(path, f"codex-{codex_fixtures.thread_id(1)}", store)
    refused = orjson.dumps({"error": {
        "message": "The encrypted content for item rs_1 could not be verified.",
        "type": "invalid_request_error", "param": None, "code": "invalid_encrypted_content"}})
    server.sequence(server.respond(400, refused),
                    server.stream(responses_stream(text="Run the tests."), done=False))
    assert await prompt(store, child, "what now?") == "Run the tests."
    first, second = (r.json()["input"] for r in server.requests)
    assert [i["encrypted_content"] for i in first if i.get("type") == "reasoning"] == [
        "gAAAA0001", "gAAAA0002"]
    assert [i for i in second if i.get("type") == "reasoning"] == []
    assert second == [i for i in first if i.get("type") != "reasoning"]

    # any other refusal is the turn's failure, said in plain words, and not tried again
    server.sequence(server.respond(400, orjson.dumps({"error": {
        "message": "Unsupported parameter: 'temperature'.", "type": "invalid_request_error",
        "param": "temperature", "code": "unsupported_parameter"}})))
    code, _, err = await asyncio.to_thread(
        run, "sessions", "prompt", child, "and then?", "--store", str(store))
    assert code != 0
    assert "Unsupported parameter" in err, err
    assert len(server.requests) == 3


def test_chat_completions_and_claude_never_get_openais_reasoning() -> None:
    events = [
        Event(1, "turn/start", "2025-09-01T10:00:00Z", {"turn": "t1"}),
        Event(2, "message", "2025-09-01T10:00:01Z", {
            "turn": "t1", "id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}),
        Event(3, "plugin/codex/reasoning", "2025-09-01T10:00:02Z", {"payload": {
            "type": "reasoning", "summary": [], "encrypted_content": "gAAAAsealed"}}),
        Event(4, "message", "2025-09-01T10:00:03Z", {
            "turn": "t1", "id": "a1", "role": "assistant",
            "parts": [{"type": "text", "text": "hello"}]}),
        Event(5, "turn/end", "2025-09-01T10:00:04Z", {"turn": "t1", "status": "completed"}),
    ]
    transcript = replay(events).transcript
    _, items = openai_wire.responses_input(transcript)
    assert items[1] == {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAsealed"}
    assert "gAAAAsealed" not in orjson.dumps(openai_wire.chat_messages(transcript)).decode()
    params = anthropic_wire.request_params(transcript, "claude-sonnet-4-5", [], None, 1024)
    assert "gAAAAsealed" not in orjson.dumps(params).decode()
