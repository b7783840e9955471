"""What the vendors' APIs send, as a stand-in server on 127.0.0.1 sends it.

Anthropic Messages streams named server-sent events (`event: message_start` …
`message_stop`, `ping` between them, `error` inside a stream); errors outside a stream are
`{"type": "error", "error": {"type", "message"}}` with the status. These builders make
those bytes for `fake_endpoint.Server`; the SDK in the product parses them.
"""

from __future__ import annotations

from typing import Any

import orjson


def named(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {orjson.dumps(data).decode()}\n\n"


def claude_stream(
    *,
    text: str = "",
    thinking: str = "",
    signature: str = "",
    tool: tuple[str, str, dict[str, Any]] | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    message_id: str = "msg_standin_1",
    usage: dict[str, int] | None = None,
    stop: bool = True,
    pieces: int = 2,
) -> list[str]:
    """A Messages stream: thinking (with its signature), text in `pieces` deltas, a tool
    call; `stop=False` cuts it before `message_stop` (the connection then closes)."""
    counts = usage or {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_read_input_tokens": 500,
        "cache_creation_input_tokens": 60,
    }
    start_usage = {**counts, "output_tokens": 1}
    out = [
        named(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        ),
        named("ping", {"type": "ping"}),
    ]
    index = 0
    if thinking:
        out.append(
            named(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        out.append(_delta(index, {"type": "thinking_delta", "thinking": thinking}))
        out.append(_delta(index, {"type": "signature_delta", "signature": signature}))
        out.append(_stop(index))
        index += 1
    if text:
        out.append(
            named(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        size = max(1, -(-len(text) // pieces))
        for at in range(0, len(text), size):
            out.append(_delta(index, {"type": "text_delta", "text": text[at : at + size]}))
        out.append(_stop(index))
        index += 1
    if tool is not None:
        call_id, name, args = tool
        out.append(
            named(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
        )
        raw = orjson.dumps(args).decode()
        half = len(raw) // 2
        for piece in (raw[:half], raw[half:]):
            out.append(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
        out.append(_stop(index))
    if not stop:
        return out
    out.append(
        named(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if tool else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": counts["output_tokens"]},
            },
        )
    )
    out.append(named("message_stop", {"type": "message_stop"}))
    return out


def claude_error(kind: str, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


def _delta(index: int, delta: dict[str, Any]) -> str:
    return named(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _stop(index: int) -> str:
    return named("content_block_stop", {"type": "content_block_stop", "index": index})


# --- OpenAI Responses ----------------------------------------------------------------


def responses_stream(
    *,
    text: str = "",
    call: tuple[str, str, dict[str, Any]] | None = None,
    model: str = "gpt-5-codex",
    usage: dict[str, Any] | None = None,
    complete: bool = True,
    reasoning: tuple[str, str] | None = None,
) -> list[str]:
    """A Responses API stream as OpenAI sends it (named events, each with its type);
    `reasoning` = (summary, encrypted content) comes first, as a reasoning item (what a
    request that includes `reasoning.encrypted_content` gets)."""
    counts = usage or {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 700},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 16},
        "total_tokens": 940,
    }
    base = {"id": "resp_standin", "object": "response", "created_at": 1764800000, "model": model}
    out = [named("response.created", {"type": "response.created", "sequence_number": 0,
                                      "response": {**base, "status": "in_progress", "output": []}})]
    n = 1
    if reasoning is not None:
        said, sealed = reasoning
        item = {"type": "reasoning", "id": "rs_standin",
                "summary": [{"type": "summary_text", "text": said}],
                "encrypted_content": sealed}
        out.append(named("response.output_item.done", {
            "type": "response.output_item.done", "output_index": 0, "item": item,
            "sequence_number": n}))
        n += 1
    if text:
        for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
            out.append(named("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "delta": piece, "sequence_number": n, "logprobs": []}))
            n += 1
    if call is not None:
        call_id, name, args = call
        item = {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name,
                "arguments": orjson.dumps(args).decode(), "status": "completed"}
        out.append(named("response.output_item.done", {
            "type": "response.output_item.done", "output_index": 1, "item": item,
            "sequence_number": n}))
        n += 1
    if complete:
        out.append(named("response.completed", {
            "type": "response.completed", "sequence_number": n,
            "response": {**base, "status": "completed", "output": [], "usage": counts}}))
    return out


# --- Gemini ---------------------------------------------------------------------------


def gemini_stream(
    *,
    text: str = "",
    call: tuple[str, dict[str, Any]] | None = None,
    model: str = "gemini-2.5-pro",
    usage: dict[str, int] | None = None,
    finish: bool = True,
) -> list[str]:
    """streamGenerateContent?alt=sse as Gemini sends it: `data:` lines, one response each,
    the last with its finishReason and usageMetadata."""
    counts = usage or {
        "promptTokenCount": 300,
        "cachedContentTokenCount": 100,
        "candidatesTokenCount": 25,
        "thoughtsTokenCount": 10,
        "totalTokenCount": 335,
    }
    out: list[str] = []
    pieces = [text[: len(text) // 2], text[len(text) // 2 :]] if text else []
    for piece in pieces:
        out.append(_gemini({"parts": [{"text": piece}], "role": "model"}, model))
    if call is not None:
        name, args = call
        part = {"functionCall": {"name": name, "args": args}, "thoughtSignature": "Z2VtaW5pLXNpZw=="}
        out.append(_gemini({"parts": [part], "role": "model"}, model))
    if finish:
        last = orjson.loads(out.pop()[len("data: "):]) if out else {
            "candidates": [{"content": {"parts": [], "role": "model"}, "index": 0}], "modelVersion": model}
        last["candidates"][0]["finishReason"] = "STOP"
        last["usageMetadata"] = counts
        out.append("data: " + orjson.dumps(last).decode() + "\r\n\r\n")
    return out


def _gemini(content: dict[str, Any], model: str) -> str:
    body = {"candidates": [{"content": content, "index": 0}], "modelVersion": model}
    return "data: " + orjson.dumps(body).decode() + "\r\n\r\n"


def gemini_error(code: int, status: str, message: str) -> bytes:
    return orjson.dumps({"error": {"code": code, "message": message, "status": status}})


# --- model lists --------------------------------------------------------------------


def claude_models(*ids: str) -> bytes:
    """GET /v1/models as Anthropic answers it (one page)."""
    data = [{"type": "model", "id": i, "display_name": i, "created_at": "2025-09-29T00:00:00Z"}
            for i in ids]
    return orjson.dumps({"data": data, "has_more": False,
                         "first_id": ids[0] if ids else None, "last_id": ids[-1] if ids else None})


def openai_models(*ids: str) -> bytes:
    """GET /models as OpenAI (and compatible servers) answer it."""
    data = [{"id": i, "object": "model", "created": 1764800000, "owned_by": "system"} for i in ids]
    return orjson.dumps({"object": "list", "data": data})


def gemini_models(*models: tuple[str, list[str]]) -> bytes:
    """GET /v1beta/models as Gemini answers it: names with `models/`, and the methods each
    supports (an embedding model does not generate content)."""
    return orjson.dumps({"models": [
        {"name": f"models/{name}", "displayName": name, "supportedGenerationMethods": methods}
        for name, methods in models]})
