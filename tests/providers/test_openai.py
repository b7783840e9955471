"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pytest
from fake_endpoint import Server, chunk

from forkwise.core.errors import ProviderError
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta, ToolCall

KEY = "sk-test-5f1c0ffee5ecret"
CHOICE = ModelChoice("openai", "test-model")
TRANSCRIPT = [{"role": "user", "content": "Hello?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def provider(server: Server, **kwargs: Any) -> OpenAICompatibleProvider:
    kwargs.setdefault("api_key", KEY)
    return OpenAICompatibleProvider(server.base_url, "test-model", **kwargs)


async def collect(
    prov: OpenAICompatibleProvider,
    transcript: Sequence[Mapping[str, Any]] = TRANSCRIPT,
    choice: ModelChoice = CHOICE,
    tools: Sequence[Mapping[str, Any]] = (),
) -> list[StepItem]:
    return [item async for item in prov.stream_step(transcript, choice, tools)]


async def failure(prov: OpenAICompatibleProvider) -> tuple[ProviderError, list[StepItem]]:
    """Run a step that must fail; returns the error and what was yielded before it."""
    seen: list[StepItem] = []

    async def drain() -> None:
        async for item in prov.stream_step(TRANSCRIPT, CHOICE, ()):
            seen.append(item)

    with pytest.raises(ProviderError) as info:
        await drain()
    assert KEY not in str(info.value)
    assert KEY not in orjson.dumps(info.value.to_dict(), default=str).decode()
    return info.value, seen


def split(items: list[StepItem]) -> tuple[list[str], StepResult]:
    *deltas, result = items
    assert all(isinstance(d, TextDelta) for d in deltas)
    assert isinstance(result, StepResult)
    return [d.text for d in deltas if isinstance(d, TextDelta)], result


@pytest.mark.asyncio
async def test_streams_text_deltas_then_one_result(server: Server) -> None:
    server.stream(
        [
            chunk(role="assistant"),
            chunk("Hel"),
            chunk("lo, "),
            chunk("world."),
            chunk(finish="stop"),
        ]
    )
    deltas, result = split(await collect(provider(server)))
    assert deltas == ["Hel", "lo, ", "world."]
    assert result == StepResult(text="Hello, world.")


@pytest.mark.asyncio
async def test_request_carries_model_messages_tools_effort_and_key(server: Server) -> None:
    server.stream([chunk("ok", finish="stop")])
    transcript = [
        {"role": "user", "content": "read a.txt"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "contents"},
    ]
    await collect(
        provider(server, reasoning_effort="low"),
        transcript,
        ModelChoice("openai", "picked-model", "high"),
        TOOLS,
    )
    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    body = request.json()
    assert body["model"] == "picked-model"
    assert body["stream"] is True
    assert body["reasoning_effort"] == "high"  # the session's choice beats the default
    assert body["tools"] == TOOLS
    assert body["messages"][0] == {"role": "user", "content": "read a.txt"}
    assert body["messages"][1]["content"] is None  # tool-call-only reply
    assert body["messages"][1]["tool_calls"] == transcript[1]["tool_calls"]
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "call-1", "content": "contents"}


@pytest.mark.asyncio
async def test_without_key_or_effort_nothing_extra_is_sent(server: Server) -> None:
    server.stream([chunk("ok", finish="stop")])
    bare_tool = {"name": "list_dir", "parameters": {"type": "object"}}
    await collect(provider(server, api_key=None), tools=[bare_tool])
    (request,) = server.requests
    assert "authorization" not in request.headers
    body = request.json()
    assert "reasoning_effort" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "list_dir", "description": "", "parameters": {"type": "object"}},
        }
    ]


@pytest.mark.asyncio
async def test_reasoning_is_collected_apart_from_text(server: Server) -> None:
    server.stream(
        [
            chunk(reasoning_content="Think"),
            chunk(reasoning_content="ing. "),
            chunk(reasoning="More."),
            chunk("Answer"),
            chunk(finish="stop"),
        ]
    )
    deltas, result = split(await collect(provider(server)))
    assert deltas == ["Answer"]
    assert result.text == "Answer"
    assert result.reasoning == "Thinking. More."


@pytest.mark.asyncio
async def test_tool_call_fragments_are_assembled_by_index(server: Server) -> None:
    def call(index: int, **fields: Any) -> dict[str, Any]:
        return chunk(tool_calls=[{"index": index, **fields}])

    server.stream(
        [
            chunk("Let me look."),
            call(0, id="call_a", type="function", function={"name": "read_file", "arguments": ""}),
            call(0, function={"arguments": '{"pa'}),
            call(
                1,
                id="call_b",
                type="function",
                function={"name": "list_dir", "arguments": '{"path"'},
            ),
            call(0, function={"arguments": 'th": "a.txt"}'}),
            call(1, function={"arguments": ': "."}'}),
            chunk(finish="tool_calls"),
        ],
        split=True,  # every event also arrives cut in two TCP chunks
    )
    deltas, result = split(await collect(provider(server), tools=TOOLS))
    assert deltas == ["Let me look."]
    assert result.tool_calls == (
        ToolCall("call_a", "read_file", {"path": "a.txt"}),
        ToolCall("call_b", "list_dir", {"path": "."}),
    )


@pytest.mark.asyncio
async def test_sse_comments_blank_events_and_usage_chunks_are_skipped(server: Server) -> None:
    server.stream(
        [
            ": keep-alive\n\n",
            "event: message\ndata: " + orjson.dumps(chunk("a")).decode() + "\n\n",
            {"id": "x", "choices": [], "usage": {"total_tokens": 3}},
            "data:" + orjson.dumps(chunk("b", finish="stop")).decode() + "\n\n",
        ]
    )
    deltas, result = split(await collect(provider(server)))
    assert deltas == ["a", "b"]
    assert result.text == "ab"


@pytest.mark.asyncio
async def test_finish_reason_without_done_is_a_complete_step(server: Server) -> None:
    server.stream([chunk("whole", finish="stop")], done=False)
    _, result = split(await collect(provider(server)))
    assert result.text == "whole"


@pytest.mark.asyncio
async def test_http_error_carries_status_and_the_servers_message(server: Server) -> None:
    server.respond(
        401,
        orjson.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}),
    )
    error, seen = await failure(provider(server))
    assert seen == []
    assert error.code == "provider-error"
    assert error.details["status"] == 401
    assert "HTTP 401" in error.message
    assert "Incorrect API key provided: ***" in error.message  # echoed key scrubbed
    assert "Check the API key" in error.message


@pytest.mark.asyncio
async def test_http_error_with_plain_text_body(server: Server) -> None:
    server.respond(503, b"model is loading, try again", content_type="text/plain")
    error, _ = await failure(provider(server))
    assert error.details["status"] == 503
    assert "model is loading, try again" in error.message


@pytest.mark.asyncio
async def test_unauthorised_without_a_key_says_why(server: Server) -> None:
    server.respond(401, b'{"detail": "missing bearer token"}')
    prov = provider(server, api_key=None, key_note="keyring unavailable: not installed")
    error, _ = await failure(prov)
    assert "missing bearer token" in error.message
    assert "No API key was sent (keyring unavailable: not installed)" in error.message


@pytest.mark.asyncio
async def test_connection_refused() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    prov = OpenAICompatibleProvider(f"http://127.0.0.1:{port}/v1", "m", api_key=KEY)
    error, _ = await failure(prov)
    assert error.details["reason"] == "connect"
    assert "Could not connect" in error.message
    assert f"127.0.0.1:{port}" in error.message


@pytest.mark.asyncio
async def test_silent_server_times_out(server: Server) -> None:
    server.hang()
    error, seen = await failure(provider(server, timeout=0.2))
    assert seen == []
    assert error.details["reason"] == "timeout"
    assert "timed out" in error.message
    await server.handlers_done()
    assert server.hangups == 3  # the SDK gave up and closed its connection, twice retried


@pytest.mark.asyncio
async def test_stall_mid_stream_times_out_after_the_text_so_far(server: Server) -> None:
    server.stream([chunk("partial")], done=False, stall=True)
    error, seen = await failure(provider(server, timeout=0.2))
    assert seen == [TextDelta("partial")]
    assert error.details["reason"] == "timeout"


@pytest.mark.asyncio
async def test_mid_stream_disconnect(server: Server) -> None:
    server.stream([chunk("one "), chunk("two ")], done=False, complete=False)
    error, seen = await failure(provider(server))
    assert seen == [TextDelta("one "), TextDelta("two ")]
    assert error.details["reason"] == "disconnected"
    assert "broke off" in error.message


@pytest.mark.asyncio
async def test_close_delimited_stream_cut_before_done(server: Server) -> None:
    server.close_delimited([chunk("one "), chunk("two ")])
    error, seen = await failure(provider(server))
    assert len(seen) == 2
    assert error.details["reason"] == "incomplete"
    assert "before the answer was complete" in error.message


@pytest.mark.asyncio
async def test_malformed_chunk(server: Server) -> None:
    server.stream([chunk("fine"), "data: {not json\n\n"])
    error, seen = await failure(provider(server))
    assert seen == [TextDelta("fine")]
    assert error.details["reason"] == "malformed"
    assert "not JSON" in error.message


@pytest.mark.asyncio
async def test_error_event_inside_the_stream(server: Server) -> None:
    server.stream([chunk("a"), {"error": {"message": "context length exceeded"}}])
    error, _ = await failure(provider(server))
    assert error.details["reason"] == "stream-error"
    assert "context length exceeded" in error.message


@pytest.mark.asyncio
async def test_tool_arguments_that_are_not_json(server: Server) -> None:
    server.stream(
        [
            chunk(
                tool_calls=[
                    {"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{oops"}}
                ]
            ),
            chunk(finish="tool_calls"),
        ]
    )
    error, _ = await failure(provider(server))
    assert error.details["reason"] == "bad-tool-call"
    assert "read_file" in error.message


def test_the_key_stays_out_of_repr() -> None:
    prov = OpenAICompatibleProvider("http://127.0.0.1:1/v1/", "m", api_key=KEY)
    assert KEY not in repr(prov)
    assert prov.has_api_key
    assert prov.url == "http://127.0.0.1:1/v1/chat/completions"


def test_base_url_must_be_http() -> None:
    with pytest.raises(ProviderError, match="http:// or https://"):
        OpenAICompatibleProvider("localhost:8080", "m")


@pytest.mark.asyncio
async def test_closing_the_stream_early_hangs_up_on_the_server(server: Server) -> None:
    """A cancelled turn closes the step's iterator; the connection must go with it."""
    server.stream([chunk("first")], done=False, stall=True)
    steps = provider(server).stream_step(TRANSCRIPT, CHOICE, ())
    assert await anext(steps) == TextDelta("first")
    await steps.aclose()  # type: ignore[attr-defined]
    await server.handlers_done()
    assert server.hangups == 1  # the server saw the client close, not its own time limit
