"""Images in a session, wherever an importer kept them: Claude Code's base64 blocks (a
prompt's `plugin/claude/image`, or inside a tool result's content), pi's image content
(`plugin/pi/image`, of a message or a tool result), Codex's input images
(`plugin/codex/image`, a data URL). The GUI asks for the bytes and type of each (to make
thumbnails off its thread); the exports embed them as data URIs."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

IMAGE_EVENTS = frozenset({"plugin/claude/image", "plugin/pi/image", "plugin/codex/image"})


@dataclass(frozen=True, slots=True)
class Image:
    """One image: its MIME type and its base64 text, decoded only when asked."""

    mime: str
    b64: str
    call: str | None = None  # the tool call whose result holds it, if any

    def data(self) -> bytes:
        """The image's bytes (empty when the recorded base64 is broken)."""
        try:
            return base64.b64decode(self.b64, validate=False)
        except (binascii.Error, ValueError):
            return b""

    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{self.b64}"


def _mime(value: Any) -> str:
    text = str(value or "")
    # only image types go in an <img>: anything else could make the export run something
    return text if text.startswith("image/") and "<" not in text and '"' not in text else ""


def from_block(block: Any, call: str | None = None) -> Image | None:
    """An Anthropic content block `{"type":"image","source":{"type":"base64",…}}`."""
    if not isinstance(block, Mapping) or block.get("type") != "image":
        return None
    source = block.get("source")
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        return None
    mime, data = _mime(source.get("media_type")), source.get("data")
    return Image(mime, data, call) if mime and isinstance(data, str) else None


def from_data_url(url: Any, call: str | None = None) -> Image | None:
    """`data:image/png;base64,…` (Codex's `input_image`); remote URLs are not embedded."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    head, _, data = url[5:].partition(",")
    mime, _, encoding = head.partition(";")
    mime = _mime(mime)
    return Image(mime, data, call) if mime and encoding == "base64" and data else None


def image_of(event: Mapping[str, Any]) -> Image | None:
    """The image an image plugin event carries, or None."""
    kind = event.get("type")
    if kind == "plugin/claude/image":
        return from_block(event.get("block"))
    if kind == "plugin/pi/image":
        mime, data = _mime(event.get("mimeType")), event.get("data")
        call = event.get("call")
        if mime and isinstance(data, str):
            return Image(mime, data, call if isinstance(call, str) else None)
        return None
    if kind == "plugin/codex/image":
        item = event.get("item")
        if isinstance(item, Mapping):
            return from_data_url(item.get("image_url"))
    return None


def in_output(output: Any, call: str | None = None) -> list[Image]:
    """The images inside a tool result's content (Claude Code keeps such a content list
    as given, image blocks included)."""
    if not isinstance(output, list):
        return []
    return [found for block in output if (found := from_block(block, call)) is not None]
