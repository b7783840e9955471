"""Writes a Forkwise session as a Claude Code transcript that `claude --resume` continues.

The entries the session shares with its Claude Code source are that source's own lines,
copied byte for byte except the top-level `sessionId` value, which becomes the new session's
id (a targeted byte replacement: the line is never re-encoded). Turns added in Forkwise after
them are written as Claude Code entries: a user entry per prompt, one assistant entry per
reply (its content blocks: text, signed thinking, tool_use), a user entry with a
`tool_result` block per result, each chained by `parentUuid` to the entry before it.
"""

from __future__ import annotations

import hashlib
import re
import uuid as uuidlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from ..base import (
    ExportedSession,
    ExportInput,
    FormatError,
    SourceRef,
    Tool,
    make_private_folders,
    message_id,
    read_source,
    write_new_file,
)
from . import layout

_CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KEY = b'"sessionId"'
#: what Claude Code writes as the result of a call the person interrupted
INTERRUPTED_CALL = "[Request interrupted by user for tool use]"
#: the Claude Code version whose writer the new entries follow
DEFAULT_VERSION = "2.0.77"


def replace_session_id(line: bytes, new_id: str) -> bytes:
    """`line` with the value of its top-level `sessionId` replaced by `new_id`; every other
    byte unchanged. Lines without a top-level `sessionId` come back as they are."""
    start = 0
    while True:
        at = line.find(_KEY, start)
        if at < 0:
            return line
        if _depth_at(line, at) == 1:
            break
        start = at + len(_KEY)
    pos = at + len(_KEY)
    while line[pos : pos + 1] in b" \t\r\n":
        pos += 1
    if line[pos : pos + 1] != b":":
        return line  # the name as a value, not a key
    pos += 1
    while line[pos : pos + 1] in b" \t\r\n":
        pos += 1
    if line[pos : pos + 1] != b'"':
        return line  # not a string id: leave it
    end = pos + 1
    while True:
        end = line.index(b'"', end)
        backslashes = 0
        while line[end - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            break
        end += 1
    return line[:pos] + orjson.dumps(new_id) + line[end + 1 :]


def _depth_at(line: bytes, at: int) -> int:
    """Object/array depth at byte `at` (outside strings), or -1 when `at` is in a string."""
    depth = 0
    in_string = False
    i = 0
    while i < at:
        c = line[i]
        if in_string:
            if c == 0x5C:
                i += 1
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x7B, 0x5B):
            depth += 1
        elif c in (0x7D, 0x5D):
            depth -= 1
        i += 1
    return -1 if in_string else depth


def _parse_ts(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _later(clock: datetime | None, value: object) -> datetime | None:
    parsed = _parse_ts(value)
    if parsed is None:
        return clock
    return parsed if clock is None or parsed > clock else clock


def _read_lines(ref: SourceRef) -> list[bytes]:
    try:
        return read_source(Path(ref.path)).split(b"\n")
    except OSError as exc:
        raise FormatError(
            f"the source of this session cannot be read: {exc.strerror}", path=ref.path
        ) from exc


class _Renderer:
    """New Claude Code entries for events added in Forkwise, chained after the copies."""

    def __init__(self, session: ExportInput, new_id: str) -> None:
        self.session = session
        self.new_id = new_id
        self.parent: str | None = None
        self.common: dict[str, Any] = {"version": DEFAULT_VERSION}
        self.model = "unknown"
        self.open_calls: list[str] = []
        self.calls: dict[str, str] = {}
        self.tool_entry: dict[str, str] = {}
        self.clock: datetime | None = None

    def copied(self, entry: Mapping[str, Any], chain: bool = True) -> None:
        """Learn the chain's end and the context fields from a copied entry (`chain`: it
        is on the exported line, not a replayed copy kept beside it)."""
        tree = isinstance(entry.get("uuid"), str) and "parentUuid" in entry
        if tree and chain and not entry.get("isSidechain"):
            self.parent = str(entry["uuid"])
        for key in ("version", "gitBranch", "userType"):
            if isinstance(entry.get(key), str):
                self.common[key] = entry[key]
        self.clock = _later(self.clock, entry.get("timestamp"))
        message = entry.get("message")
        model = message.get("model") if isinstance(message, dict) else None
        if isinstance(model, str) and model != "<synthetic>":
            self.model = model

    def _call_id(self, call: str) -> str:
        if _CALL_ID.fullmatch(call):
            return call
        mapped = self.calls.get(call)
        if mapped is None:
            mapped = "toolu_fw" + hashlib.blake2b(call.encode(), digest_size=10).hexdigest()
            self.calls[call] = mapped
        return mapped

    def _entry(self, kind: str, ts: str, **fields: Any) -> bytes:
        uuid = str(uuidlib.uuid4())
        entry: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": self.common.get("userType", "external"),
            "cwd": self.session.cwd,
            "sessionId": self.new_id,
            "version": self.common["version"],
        }
        if "gitBranch" in self.common:
            entry["gitBranch"] = self.common["gitBranch"]
        # strictly after everything before it: `claude --resume` continues the latest entry
        clock = _parse_ts(ts)
        if clock is None or (self.clock is not None and clock <= self.clock):
            base = self.clock or datetime.now(UTC)
            clock = base + timedelta(milliseconds=1)
        self.clock = clock
        stamp = clock.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        entry.update(type=kind, **fields, uuid=uuid, timestamp=stamp)
        self.parent = uuid
        return orjson.dumps(entry)

    def render(self, event: Mapping[str, Any]) -> list[bytes]:
        etype = event.get("type")
        ts = str(event.get("ts", ""))
        if etype == "model/select":
            self.model = str(event.get("model", self.model))
        elif etype == "session/title":
            title = {
                "type": "custom-title",
                "customTitle": event.get("title"),
                "sessionId": self.new_id,
            }
            return [orjson.dumps(title)]
        elif etype == "message" and event.get("role") == "user":
            text = "".join(
                str(p.get("text", "")) for p in event.get("parts") or () if p.get("type") == "text"
            )
            return [self._entry("user", ts, message={"role": "user", "content": text})]
        elif etype == "message" and event.get("role") == "assistant":
            return self._assistant(event, ts)
        elif etype == "tool/result":
            call = self._call_id(str(event.get("call", "")))
            output = event.get("output")
            if not isinstance(output, str | list):
                output = orjson.dumps(output).decode()
            return [self._result(call, output, bool(event.get("error")), ts)]
        elif etype == "turn/end":
            # a call the turn left without a result is answered as Claude Code answers a
            # call the person interrupted, so the resumed conversation stays well-formed
            open_calls, self.open_calls = self.open_calls, []
            return [self._result(call, INTERRUPTED_CALL, True, ts) for call in open_calls]
        return []

    def _result(self, call: str, output: str | list[Any], error: bool, ts: str) -> bytes:
        block: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": output}
        if error:
            block["is_error"] = True
        if call in self.open_calls:
            self.open_calls.remove(call)
        extra: dict[str, Any] = {}
        if call in self.tool_entry:
            extra["sourceToolAssistantUUID"] = self.tool_entry[call]
        return self._entry("user", ts, message={"role": "user", "content": [block]}, **extra)

    def _assistant(self, event: Mapping[str, Any], ts: str) -> list[bytes]:
        """One entry per content block sharing `message.id`, as Claude Code writes a reply
        (it splits a multi-block entry into these when it resumes, and writes them again)."""
        content: list[dict[str, Any]] = []
        for part in event.get("parts") or ():
            ptype = part.get("type")
            if ptype == "text":
                content.append({"type": "text", "text": str(part.get("text", ""))})
            elif ptype == "reasoning" and part.get("signature"):
                thinking = str(part.get("text", ""))
                content.append(
                    {"type": "thinking", "thinking": thinking, "signature": part["signature"]}
                )
            elif ptype == "tool_call":
                args = part.get("args")
                content.append(
                    {
                        "type": "tool_use",
                        "id": self._call_id(str(part.get("id", ""))),
                        "name": str(part.get("name", "")),
                        "input": args if isinstance(args, dict) else {},
                    }
                )
        if not content:
            content.append({"type": "text", "text": ""})
        digest = hashlib.blake2b(str(event.get("id")).encode(), digest_size=12).hexdigest()
        calls = any(block["type"] == "tool_use" for block in content)
        out: list[bytes] = []
        for n, block in enumerate(content):
            final = n == len(content) - 1
            message = {
                "id": f"msg_fw{digest}",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": ("tool_use" if calls else "end_turn") if final else None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
            out.append(self._entry("assistant", ts, message=message))
            if block["type"] == "tool_use":
                self.tool_entry[block["id"]] = str(self.parent)
                self.open_calls.append(block["id"])
        return out


class ClaudeWriter:
    tool: Tool = "claude"

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        return layout.projects_dir(layout.config_dir(env, home))

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        new_id = str(uuidlib.uuid4())
        data = self.render(session, new_id)
        if out is None:
            if not session.cwd:
                raise FormatError(
                    "the session has no working folder, so Claude Code would not find it "
                    "(name the file with --out)",
                    path=str(root),
                )
            folder = layout.projects_dir(root) / layout.munge_cwd(session.cwd)
            make_private_folders(folder)
            target = folder / f"{new_id}.jsonl"
        else:
            target = out
            if not target.parent.is_dir():
                raise FormatError(f"there is no folder {target.parent}", path=str(target))
        write_new_file(target, data)
        return ExportedSession(target, new_id, f"claude --resume {new_id}")

    def render(self, session: ExportInput, new_id: str) -> bytes:
        """The whole transcript: the source lines the session shares, in their order, then
        entries for what was added in Forkwise after the last of them."""
        wanted: dict[str, set[int]] = {}
        refs: dict[str, SourceRef] = {}
        expected: dict[tuple[str, int], str] = {}
        replayed: set[tuple[str, int]] = set()
        last = -1
        for n, event in enumerate(session.events):
            src = event.get("src")
            if not isinstance(src, Mapping):
                continue
            ref = session.sources.get(str(src.get("id")))
            if ref is None or ref.tool != "claude":
                continue
            refs.setdefault(ref.id, ref)
            numbers = src.get("lines") or ()
            wanted.setdefault(ref.id, set()).update(numbers)
            if event.get("type") == "message" and numbers:
                # the reader keys a message id by its first entry's uuid
                expected[(ref.id, numbers[0])] = str(event.get("id")).rsplit(":", 1)[-1]
            if event.get("type") == "plugin/claude/replayed":
                # entries written again under new uuids: off the line, never its end
                replayed.update((ref.id, number) for number in numbers)
            last = n
        renderer = _Renderer(session, new_id)
        out: list[bytes] = []
        for key, numbers in wanted.items():
            ref = refs[key]
            lines = _read_lines(ref)
            for number in sorted(numbers):
                if not 1 <= number <= len(lines) or not lines[number - 1].strip():
                    raise FormatError(
                        f"line {number} of the source is missing (was the file changed?)",
                        path=ref.path,
                        line=number,
                    )
                raw = lines[number - 1]
                entry = orjson.loads(raw)
                suffix = expected.get((key, number))
                if suffix is not None and _key_suffix(entry) != suffix:
                    raise FormatError(
                        f"line {number} of the source is not the entry that was imported "
                        "(the file was rewritten since): import it again first",
                        path=ref.path,
                        line=number,
                    )
                out.append(replace_session_id(raw, new_id))
                renderer.copied(entry, chain=(key, number) not in replayed)
        model = (session.model or {}).get("model")
        if isinstance(model, str):
            renderer.model = model  # the session's own model, once its copies are read
        for event in session.events[last + 1 :]:
            out.extend(renderer.render(event))
        return b"".join(line + b"\n" for line in out)


def _key_suffix(entry: Mapping[str, Any]) -> str:
    """The suffix `message_id` derives from an entry's uuid (the reader's key)."""
    return message_id("user", "", str(entry.get("uuid"))).rsplit(":", 1)[-1]


WRITER = ClaudeWriter()
