"""A provider transcript as an OpenAI request: Chat Completions messages, or Responses
input items (pure; the tests read them).

The transcript is already chat-shaped (`forkwise.core.log.replay`); Chat Completions keeps
role, content, tool calls and their ids, plus images as `image_url` parts. Responses takes
items: messages with `input_text`/`output_text` parts, `function_call` and
`function_call_output` items paired by call id. OpenAI's own encrypted reasoning (a
Codex session's, or a reply this provider got) goes back as a `reasoning` item before the
reply it preceded, with its summary and `encrypted_content` and without its id (requests
are not stored, so the API could not find it by id); reasoning of another vendor (signed
for it) and reasoning without its encrypted content are not sent, nor to Chat Completions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

Json = dict[str, Any]
_MESSAGE_KEYS: Final = ("role", "content", "tool_calls", "tool_call_id", "name")


def image_url(block: object) -> str | None:
    """A data URL for a Claude-shaped image block, or the URL an OpenAI part names."""
    if not isinstance(block, Mapping):
        return None
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64":
        return f"data:{source.get('media_type')};base64,{source.get('data')}"
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else url
    return url if isinstance(url, str) else None


def chat_messages(transcript: Sequence[Mapping[str, Any]]) -> list[Json]:
    out: list[Json] = []
    for message in transcript:
        entry = {k: message[k] for k in _MESSAGE_KEYS if k in message}
        if entry.get("tool_calls") and not entry.get("content"):
            entry["content"] = None  # the most widely accepted form for a call-only reply
        images = [u for u in (image_url(b) for b in message.get("images") or ()) if u]
        if images and entry.get("role") == "user":
            parts: list[Json] = [{"type": "text", "text": str(entry.get("content") or "")}]
            parts += [{"type": "image_url", "image_url": {"url": u}} for u in images]
            entry["content"] = parts
        out.append(entry)
    return out


def chat_tool(tool: Mapping[str, Any]) -> Json:
    """A tool spec in the Chat Completions `tools` format; a bare one is wrapped."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        return dict(tool)
    function = {
        "name": tool.get("name"),
        "description": tool.get("description", ""),
        "parameters": tool.get("parameters", {"type": "object", "properties": {}}),
    }
    return {"type": "function", "function": function}


def responses_tool(tool: Mapping[str, Any]) -> Json:
    function = chat_tool(tool)["function"]
    return {
        "type": "function",
        "name": function.get("name"),
        "description": function.get("description", ""),
        "parameters": function.get("parameters") or {"type": "object", "properties": {}},
    }


def responses_input(transcript: Sequence[Mapping[str, Any]]) -> tuple[str, list[Json]]:
    """(instructions, input items) for the Responses API."""
    instructions: list[str] = []
    items: list[Json] = []
    for message in transcript:
        role = message.get("role")
        text = str(message.get("content") or "")
        if role == "system":
            if text:
                instructions.append(text)
        elif role == "user":
            parts: list[Json] = [{"type": "input_text", "text": text}] if text else []
            for block in message.get("images") or ():
                url = image_url(block)
                if url:
                    parts.append({"type": "input_image", "image_url": url})
            if parts:
                items.append({"role": "user", "content": parts})
        elif role == "assistant":
            items.extend(_reasoning_items(message))
            if text:
                items.append(
                    {"role": "assistant", "content": [{"type": "output_text", "text": text}]}
                )
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping):
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": str(call.get("id", "")),
                            "name": str(function.get("name", "")),
                            "arguments": str(function.get("arguments") or "{}"),
                        }
                    )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id", "")),
                    "output": text,
                }
            )
    return "\n\n".join(instructions), items


def _reasoning_items(message: Mapping[str, Any]) -> list[Json]:
    """The `reasoning` input items of OpenAI's encrypted reasoning in a reply's parts."""
    out: list[Json] = []
    for part in message.get("parts") or ():
        if (
            isinstance(part, Mapping)
            and part.get("type") == "reasoning"
            and part.get("vendor") == "openai"
            and isinstance(part.get("encrypted"), str)
            and part["encrypted"]
        ):
            said = str(part.get("text") or "")
            summary = [{"type": "summary_text", "text": said}] if said else []
            out.append(
                {"type": "reasoning", "summary": summary, "encrypted_content": part["encrypted"]}
            )
    return out
