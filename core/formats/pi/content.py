"""What the content of a pi message becomes: Forkwise parts, images, plugin fields.

pi stores content as a string or a list of blocks (`text`, `image`, `thinking`,
`toolCall`, as `@mariozechner/pi-ai` defines them); Forkwise parts are `text`, `reasoning`
and `tool_call`. A block's signature (`textSignature`, `thinkingSignature`,
`thoughtSignature`) stays on its part as `signature`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def assistant_parts(
    message: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """Parts of an assistant message, and the blocks kept as plugin events (redacted
    thinking: an encrypted payload; a block type this reader does not know)."""
    parts: list[dict[str, Any]] = []
    extras: list[tuple[str, dict[str, Any]]] = []
    for block in blocks(message.get("content")):
        kind = block.get("type")
        part: dict[str, Any]
        if kind == "text":
            part = {"type": "text", "text": str(block.get("text", ""))}
            signature = block.get("textSignature")
        elif kind == "thinking" and not block.get("redacted"):
            part = {"type": "reasoning", "text": str(block.get("thinking", ""))}
            signature = block.get("thinkingSignature")
        elif kind == "toolCall":
            args = block.get("arguments")
            part = {
                "type": "tool_call",
                "id": str(block.get("id", "")),
                "name": str(block.get("name", "")),
                "args": args if isinstance(args, dict) else {},
            }
            signature = block.get("thoughtSignature")
        else:
            extras.append(("redacted_thinking" if kind == "thinking" else "content", block))
            continue
        if signature is not None:
            part["signature"] = signature
        parts.append(part)
    return parts, extras


def entry_fields(data: dict[str, Any], drop: Iterable[str] = ()) -> dict[str, Any]:
    """An entry's own fields for an event: not its type and timestamp (the event has
    those), nothing the event may not carry."""
    skip = {"type", "timestamp", "seq", "ts", "src", *drop}
    return {k: v for k, v in data.items() if k not in skip}


def plugin_kind(etype: str) -> str:
    clean = "".join(c if c.isalnum() or c in "_-" else "_" for c in etype.lower())
    return clean[:48] or "entry"


def blocks(content: object) -> list[dict[str, Any]]:
    if type(content) is list:
        return (
            content
            if all(type(b) is dict for b in content)
            else [b for b in content if type(b) is dict]
        )
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return []


def user_content(content: object) -> tuple[list[dict[str, Any]], list[tuple[int, dict[str, Any]]]]:
    """Text parts and the (index, block) of each image of a user or tool-result content."""
    texts: list[dict[str, Any]] = []
    images: list[tuple[int, dict[str, Any]]] = []
    for index, block in enumerate(blocks(content)):
        if block.get("type") == "image":
            images.append((index, block))
        else:
            texts.append({"type": "text", "text": str(block.get("text", ""))})
    return texts, images


def first_text(parts: list[dict[str, Any]]) -> str:
    for part in parts:
        if part.get("type") == "text" and part.get("text"):
            return str(part["text"])
    return ""
