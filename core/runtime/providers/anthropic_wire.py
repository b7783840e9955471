"""A provider transcript as an Anthropic Messages request (pure; the tests read it).

The transcript (`forkwise.core.log.replay`) is chat-shaped: user, assistant (with
`tool_calls`), tool and system entries; an entry whose message had more than text and
calls keeps its `parts` (thinking with its signature, redacted thinking, images), a tool
result that was not plain text keeps its `blocks`, and a prompt's images ride along as
`images`. Messages needs strict alternation, so consecutive entries of one side are
merged: tool results and the next prompt make one user message, as Claude Code sends
them. Thinking goes back only with its signature (a block the API made); reasoning from
another vendor has none (or is marked with its `vendor`) and stays out. Empty text blocks
are refused by the API and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

Json = dict[str, Any]
#: what a reasoning target asks of extended thinking (budget tokens)
THINKING_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}
DEFAULT_MAX_TOKENS: Final = 8192


def thinking_budget(reasoning: str | None) -> int | None:
    """Budget tokens for a reasoning target ("low" …, or a number); None: no thinking."""
    if not reasoning or reasoning in ("none", "off"):
        return None
    if reasoning.isdigit():
        return max(int(reasoning), 1024)
    return THINKING_BUDGETS.get(reasoning, THINKING_BUDGETS["medium"])


def request_params(
    transcript: Sequence[Mapping[str, Any]],
    model: str,
    tools: Sequence[Mapping[str, Any]],
    reasoning: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Json:
    """The keyword arguments of `messages.stream` for one step."""
    system, messages = messages_of(transcript)
    params: Json = {"model": model, "messages": messages, "max_tokens": max_tokens}
    if system:
        params["system"] = system
    if tools:
        params["tools"] = [tool_of(t) for t in tools]
    budget = thinking_budget(reasoning)
    if budget is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = max_tokens + budget
    return params


def tool_of(spec: Mapping[str, Any]) -> Json:
    """A tool spec (OpenAI function format, or bare) as an Anthropic tool."""
    function = spec.get("function") if spec.get("type") == "function" else spec
    function = function if isinstance(function, Mapping) else {}
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    return {
        "name": str(function.get("name", "")),
        "description": str(function.get("description", "")),
        "input_schema": dict(schema),
    }


def messages_of(transcript: Sequence[Mapping[str, Any]]) -> tuple[str, list[Json]]:
    """(system text, messages) for a transcript."""
    system: list[str] = []
    out: list[Json] = []

    def add(role: str, blocks: list[Json]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for entry in transcript:
        role = entry.get("role")
        if role == "system":
            text = str(entry.get("content") or "")
            if text:
                system.append(text)
        elif role == "user":
            add("user", _user_blocks(entry))
        elif role == "assistant":
            add("assistant", _assistant_blocks(entry))
        elif role == "tool":
            add("user", [_tool_result(entry)])
    while out and out[0]["role"] != "user":
        out.pop(0)  # the API's first message is the person's
    return "\n\n".join(system), out


def _text(text: object) -> list[Json]:
    value = text if isinstance(text, str) else ("" if text is None else str(text))
    return [{"type": "text", "text": value}] if value.strip() else []


def _user_blocks(entry: Mapping[str, Any]) -> list[Json]:
    blocks = _text(entry.get("content"))
    for image in entry.get("images") or ():
        block = image_block(image)
        if block is not None:
            blocks.append(block)
    return blocks


def image_block(block: object) -> Json | None:
    """An image as Messages takes it: a Claude image block as it is, a data URL or an
    OpenAI `image_url` part turned into a base64 source; None for anything else."""
    if not isinstance(block, Mapping):
        return None
    source = block.get("source")
    if block.get("type") == "image" and isinstance(source, Mapping):
        return {"type": "image", "source": dict(source)}
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else url
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        media, _, data = url[5:].partition(";base64,")
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return None


def _assistant_blocks(entry: Mapping[str, Any]) -> list[Json]:
    parts = entry.get("parts")
    if not isinstance(parts, list):
        blocks = _text(entry.get("content"))
        blocks.extend(_tool_use(c) for c in entry.get("tool_calls") or () if isinstance(c, dict))
        return blocks
    blocks = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "reasoning" and part.get("redacted"):
            blocks.append({"type": "redacted_thinking", "data": str(part["redacted"])})
        elif kind == "reasoning" and part.get("signature") and part.get("vendor") in (
            None,
            "anthropic",
        ):
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(part.get("text", "")),
                    "signature": str(part["signature"]),
                }
            )
        elif kind == "text":
            blocks.extend(_text(part.get("text")))
        elif kind == "tool_call":
            args = part.get("args")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(part.get("id", "")),
                    "name": str(part.get("name", "")),
                    "input": dict(args) if isinstance(args, Mapping) else {"input": args},
                }
            )
        elif kind == "image":
            block = image_block(part)
            if block is not None:
                blocks.append(block)
    return blocks


def _tool_use(call: Mapping[str, Any]) -> Json:
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    raw = function.get("arguments")
    try:
        args = orjson.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except orjson.JSONDecodeError:
        args = {"input": raw}
    return {
        "type": "tool_use",
        "id": str(call.get("id", "")),
        "name": str(function.get("name", "")),
        "input": args if isinstance(args, dict) else {"input": args},
    }


def _tool_result(entry: Mapping[str, Any]) -> Json:
    block: Json = {"type": "tool_result", "tool_use_id": str(entry.get("tool_call_id", ""))}
    blocks = entry.get("blocks")
    if isinstance(blocks, list):
        content: list[Json] = []
        for item in blocks:
            if isinstance(item, Mapping) and item.get("type") == "text":
                content.extend(_text(item.get("text")))
            else:
                image = image_block(item)
                if image is not None:
                    content.append(image)
        block["content"] = content
    else:
        block["content"] = str(entry.get("content") or "")
    if entry.get("isError"):
        block["is_error"] = True
    return block
