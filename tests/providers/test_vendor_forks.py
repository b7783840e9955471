"""Forks of imported Codex and Gemini sessions continue with their models through the
vendors' SDKs (`openai` Responses, `google-genai`), each against a stand-in server on
127.0.0.1 reached through the SDK's base-URL variable; and the Anthropic provider's
failures (401, 500, overloaded, an error event in the stream, a cut stream) read as plain
words with the key nowhere in them."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server
from vendor_streams import (
    claude_error,
    claude_stream,
    gemini_error,
    gemini_stream,
    named,
    responses_stream,
)

from forkwise.core.cli import main as cli
from forkwise.core.errors import ProviderError
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.claude import ClaudeProvider

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
import codex_fixtures
import pi_fixtures


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def events_of(store: Path, sid: str) -> list[dict[str, Any]]:
    lines = (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines[1:]]


async def fork_of(path: Path, tool: str, sid: str, store: Path) -> str:
    code, _, err = await asyncio.to_thread(
        run, "sessions", "import", "--from", tool, str(path), "--store", str(store)
    )
    assert code == 0, err
    code, out, err = await asyncio.to_thread(
        run, "sessions", "fork", sid, "--store", str(store), "--json"
    )
    assert code == 0, err
    child: str = orjson.loads(out)["child"]
    return child


@pytest.mark.asyncio
async def test_a_fork_of_a_codex_session_continues_on_openai_responses(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-standin-0123456789")
    store = tmp_path / "store"
    path = codex_fixtures.basic().write(tmp_path / "codex")
    child = await fork_of(path, "codex", f"codex-{codex_fixtures.thread_id(1)}", store)
    selected = [e for e in events_of(store, child) if e["type"] == "model/select"]
    assert (selected[-1]["provider"], selected[-1]["model"]) == ("openai", "gpt-5-codex")

    server.stream(responses_stream(text="Next, run the tests."), done=False)
    code, out, err = await asyncio.to_thread(
        run, "sessions", "prompt", child, "what now?", "--store", str(store)
    )
    assert code == 0, err
    assert out.strip() == "Next, run the tests."
    (request,) = server.requests
    assert request.path == "/v1/responses"
    body = request.json()
    assert body["model"] == "gpt-5-codex"
    assert body["reasoning"] == {"effort": "high"}  # the session's last reasoning target
    items = body["input"]
    # the whole history: prompts, the shell call and its output paired by call id, answers
    assert items[0] == {"role": "user", "content": [{"type": "input_text", "text": "list the files"}]}
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = {i["call_id"]: i for i in items if i.get("type") == "function_call_output"}
    assert [c["call_id"] for c in calls] == ["call_ls", "call_patch", "call_test"]
    assert set(outputs) == {"call_ls", "call_patch", "call_test"}
    assert orjson.loads(calls[0]["arguments"]) == {"command": ["bash", "-lc", "ls"], "timeout_ms": 1000}
    assert items[-1] == {"role": "user", "content": [{"type": "input_text", "text": "what now?"}]}
    assert {t["name"] for t in body["tools"]} >= {"read_file"}
    usage = [e for e in events_of(store, child) if e["type"] == "usage"][-1]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (200, 700, 40, 16)


def pi_gemini_session(root: Path) -> Path:
    s = pi_fixtures.PiSession(pi_fixtures.SID)
    s.user("hello")
    s.assistant("hi", provider="google", model="gemini-2.5-pro")
    s.user("read a.py")
    s.assistant(calls=(("call-1", "read", {"path": "a.py"}),), provider="google", model="gemini-2.5-pro")
    s.tool_result("call-1", "read", "print(1)")
    s.assistant("It prints 1.", provider="google", model="gemini-2.5-pro")
    return s.write(root)


@pytest.mark.asyncio
async def test_a_fork_of_a_gemini_session_continues_on_gemini(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://127.0.0.1:{server.port}")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-standin-0123456789abcdef")
    store = tmp_path / "store"
    path = pi_gemini_session(tmp_path / "pi")
    child = await fork_of(path, "pi", f"pi-{pi_fixtures.SID}", store)
    selected = [e for e in events_of(store, child) if e["type"] == "model/select"]
    # pi named the provider `google`: the fork runs on this app's Gemini provider
    assert (selected[-1]["provider"], selected[-1]["model"]) == ("gemini", "gemini-2.5-pro")

    server.stream(gemini_stream(text="Shall I run it?"), done=False)
    code, out, err = await asyncio.to_thread(
        run, "sessions", "prompt", child, "and then?", "--store", str(store)
    )
    assert code == 0, err
    assert out.strip() == "Shall I run it?"
    (request,) = server.requests
    assert request.path.endswith("/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
    assert request.headers["x-goog-api-key"] == "AIza-standin-0123456789abcdef"
    contents = request.json()["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user", "model", "user"]
    call = contents[3]["parts"][0]
    assert call["functionCall"]["name"] == "read"
    assert call["functionCall"]["args"] == {"path": "a.py"}
    response = contents[4]["parts"][0]["functionResponse"]
    assert (response["name"], response["response"]) == ("read", {"output": "print(1)"})
    assert contents[-1]["parts"] == [{"text": "and then?"}]
    usage = [e for e in events_of(store, child) if e["type"] == "usage"][-1]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (200, 100, 35, 10)


@pytest.mark.asyncio
async def test_gemini_quota_errors_are_retried_then_said_plainly(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forkwise.core.runtime.providers.gemini import GeminiProvider

    server.respond(429, gemini_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"))
    provider = GeminiProvider(
        api_key="AIza-secret-0123456789abcdef", base_url=f"http://127.0.0.1:{server.port}",
        retry_delay=0.01,
    )
    with pytest.raises(ProviderError) as caught:
        async for _ in provider.stream_step([{"role": "user", "content": "hi"}],
                                            ModelChoice("gemini", "gemini-2.5-pro"), []):
            pass
    assert len(server.requests) == 3  # the SDK's retries
    text = str(caught.value)
    assert "Gemini is limiting requests (HTTP 429" in text
    assert "Quota exceeded" in text
    assert "0123456789abcdef" not in text


KEY = "sk-ant-secret-errors-0123456789"


async def claude_failure(server: Server, retries: int = 0) -> str:
    provider = ClaudeProvider(api_key=KEY, base_url=f"http://127.0.0.1:{server.port}",
                              max_retries=retries)
    with pytest.raises(ProviderError) as caught:
        async for _ in provider.stream_step([{"role": "user", "content": "hi"}],
                                            ModelChoice("anthropic", "claude-sonnet-4-5"), []):
            pass
    text = str(caught.value)
    assert KEY not in text
    return text


@pytest.mark.asyncio
async def test_claude_failures_read_as_plain_words(server: Server) -> None:
    server.respond(401, claude_error("authentication_error", f"invalid x-api-key {KEY}"))
    said = await claude_failure(server)
    assert "Anthropic refused the API key (HTTP 401)" in said
    assert "invalid x-api-key ***" in said  # the echoed key scrubbed

    server.respond(500, claude_error("api_error", "Internal server error"),
                   headers={"retry-after-ms": "5"})
    said = await claude_failure(server, retries=1)
    assert "Anthropic had a server error (HTTP 500) (tried 2 times)" in said
    assert len(server.requests) == 3

    server.respond(529, claude_error("overloaded_error", "Overloaded"))
    said = await claude_failure(server)
    assert "Anthropic is overloaded right now" in said

    # the error event Anthropic sends inside a stream that already started
    events = claude_stream(text="partial", stop=False)
    events.append(named("error", {"type": "error",
                                  "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    server.stream(events, done=False)
    said = await claude_failure(server)
    assert "Anthropic is overloaded right now" in said

    server.stream(claude_stream(text="cut here", stop=False), done=False, complete=False)
    said = await claude_failure(server)
    assert "broke off in the middle of the answer" in said


@pytest.mark.asyncio
async def test_stop_keeps_the_part_claude_streamed(server: Server, tmp_path: Path) -> None:
    """A Claude answer stopped mid-stream: what was shown stays as the partial message."""
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host
    from forkwise.core.runtime.providers.offline import OfflineProvider

    provider = ClaudeProvider(api_key=KEY, base_url=f"http://127.0.0.1:{server.port}")
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path),
                     providers={"offline": OfflineProvider(), "anthropic": provider})
    client = await Client.in_process(host)
    deltas: list[str] = []
    got = asyncio.Event()

    def seen(note: Any) -> None:
        if note.get("kind") == "session/delta":
            deltas.append(note["text"])
            got.set()

    try:
        await client.subscribe(seen)
        sid = (await client.create_session("stop"))["id"]
        await client.set_model(sid, "anthropic", "claude-sonnet-4-5")
        server.stream(claude_stream(text="First half, second half", stop=False, pieces=2),
                      done=False, stall=True)
        await client.prompt(sid, "talk")
        await asyncio.wait_for(got.wait(), 10)
        await client.cancel(sid)
        events = list(await client.events(sid))
    finally:
        await client.close()
        await host.close()
    assert events[-1]["type"] == "turn/end"
    assert events[-1]["status"] == "cancelled"
    partial = [e for e in events if e["type"] == "message" and e.get("partial")]
    assert len(partial) == 1
    assert partial[0]["parts"][0]["text"] == "".join(deltas)
    assert partial[0]["parts"][0]["text"].startswith("First half")
