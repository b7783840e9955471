"""Writing a Forkwise session as a Gemini CLI session that `gemini --resume <id>` continues
from its project folder.

The file is `tmp/<slug of the cwd>/chats/session-<time>-<id8>.jsonl` (the slug registered
in `projects.json` as Gemini CLI does): a metadata line with a new UUID and the project's
hash, then the messages. A message the session shares with an imported Gemini CLI source
is the source's own record (its line byte for byte when it had a line of its own); the
turns added in Forkwise (or imported from another tool) become Gemini CLI records — a
prompt a `user` message, an answer a `gemini` message with its reasoning as `thoughts`
and its tool calls, each with its result, as `toolCalls`.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.store.atomic import write_file_atomically

from ..base import ExportedSession, ExportInput, FormatError, SourceRef, Tool
from . import layout
from .records import GeminiFile, load

_PLUGIN_MESSAGES = ("info", "warning", "error", "message")


def iso(ts: str | None = None) -> str:
    if ts:
        return ts
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Source:
    """A Gemini CLI source file, read once: every version of every message by id, and its
    raw lines."""

    def __init__(self, ref: SourceRef) -> None:
        path = Path(ref.path)
        self.file: GeminiFile = load(path)
        self.lines: list[bytes] = [] if self.file.legacy else path.read_bytes().split(b"\n")
        self.by_line: dict[tuple[int, str], dict[str, Any]] = {}
        for branch in self.file.branches:
            for msg in branch.path:
                self.by_line[(msg.line, msg.id)] = msg.record
        for msg in self.file.messages:
            self.by_line[(msg.line, msg.id)] = msg.record

    def line(self, number: int, native: str) -> bytes:
        record = self.by_line.get((number, native))
        if record is None:
            raise FormatError(
                f"the source has no message {native} on line {number}: it changed since it "
                "was imported",
                path=str(self.file.path),
                line=number,
            )
        if 0 < number <= len(self.lines):
            raw = self.lines[number - 1]
            try:
                if orjson.loads(raw).get("id") == native:
                    return raw
            except (orjson.JSONDecodeError, AttributeError):
                pass
        return orjson.dumps(record)


class GeminiWriter:
    tool: Tool = "gemini"

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        return layout.gemini_dir(env, home)

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        body = _Body(session)
        for event in session.events:
            body.add(event)
        new_id = str(uuid.uuid4())
        now = iso()
        cwd = os.path.abspath(session.cwd) if session.cwd else os.getcwd()
        meta: dict[str, Any] = {
            "sessionId": new_id,
            "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
            "startTime": now,
            "lastUpdated": now,
        }
        summary = session.title or _first_prompt(session.events)
        if summary:
            # Gemini CLI lists a session by its summary, and asks its model for one (a
            # request per listing, slow to give up offline) when the file has none
            meta["summary"] = summary[:80]
        data = b"\n".join([orjson.dumps(meta), *body.lines()]) + b"\n"
        if out is None:
            gemini = layout.tmp_dir(root).parent
            try:
                slug = layout.project_slug(gemini, cwd)
                folder = gemini / "tmp" / slug / "chats"
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise FormatError(f"cannot write under {gemini}: {exc}", path=str(gemini)) from exc
            stamp = now[:16].replace(":", "-")
            target = folder / f"{layout.SESSION_PREFIX}{stamp}-{new_id[:8]}.jsonl"
        else:
            if not out.parent.is_dir():
                raise FormatError(f"the folder {out.parent} does not exist", path=str(out))
            target = out
        try:
            write_file_atomically(target, data, overwrite=False)
        except FileExistsError as exc:
            raise FormatError(
                f"{target} exists already; nothing was written", path=str(target)
            ) from exc
        except OSError as exc:
            raise FormatError(
                f"cannot write {target}: {exc.strerror or exc}", path=str(target)
            ) from exc
        return ExportedSession(target, new_id, f"gemini --resume {new_id}")


def _first_prompt(events: Sequence[Mapping[str, Any]]) -> str:
    for event in events:
        if event.get("type") == "message" and event.get("role") == "user":
            for part in event.get("parts") or ():
                text = str(part.get("text") or "").strip() if isinstance(part, Mapping) else ""
                if text:
                    return text.splitlines()[0]
    return ""


class _Body:
    """The message lines of the written file, in the order of the session's events."""

    def __init__(self, session: ExportInput) -> None:
        self.session = session
        self.sources: dict[str, _Source] = {}
        self.out: list[bytes | dict[str, Any]] = []
        self.copied: set[tuple[str, str]] = set()
        self.calls: dict[str, dict[str, Any]] = {}  # call id -> its toolCalls record
        self.answer: dict[str, Any] | None = None  # the gemini record being built
        self.model: str | None = None

    def lines(self) -> list[bytes]:
        return [item if isinstance(item, bytes) else orjson.dumps(item) for item in self.out]

    def _source(self, sid: str) -> _Source | None:
        ref = self.session.sources.get(sid)
        if ref is None or ref.tool != "gemini":
            return None
        if sid not in self.sources:
            self.sources[sid] = _Source(ref)
        return self.sources[sid]

    def add(self, event: Mapping[str, Any]) -> None:
        etype = event.get("type")
        src = event.get("src")
        if etype == "model/select" and isinstance(event.get("model"), str):
            self.model = event["model"]
        native = event.get("native") if etype in ("message", "tool/result") else None
        if etype is not None and str(etype).startswith("plugin/gemini/"):
            kind = str(etype).rsplit("/", 1)[-1]
            native = event.get("id") if kind in _PLUGIN_MESSAGES else None
            if native is None:
                return  # usage, pictures, parts: their message's record carries them
        if isinstance(src, Mapping) and isinstance(native, str):
            source = self._source(str(src.get("id")))
            lines = src.get("lines")
            if source is not None and isinstance(lines, list) and lines:
                key = (str(src.get("id")), native)
                if key not in self.copied:
                    self.copied.add(key)
                    self.out.append(source.line(int(lines[0]), native))
                    self.answer = None
                return
        if isinstance(src, Mapping) and self._source(str(src.get("id"))) is not None:
            return  # a tool result or model change of a copied message: in its record
        if etype == "message":
            self._message(event)
        elif etype == "tool/result":
            self._result(event)

    def _message(self, event: Mapping[str, Any]) -> None:
        parts = [p for p in event.get("parts") or () if isinstance(p, Mapping)]
        text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
        ts = iso(event.get("ts") if isinstance(event.get("ts"), str) else None)
        if event.get("role") == "user":
            self.answer = None
            self.out.append(
                {
                    "id": str(uuid.uuid4()),
                    "timestamp": ts,
                    "type": "user",
                    "content": [{"text": text}],
                }
            )
            return
        thoughts = [
            {"subject": "", "description": str(p.get("text", "")), "timestamp": ts}
            for p in parts
            if p.get("type") == "reasoning"
        ]
        calls = []
        for p in parts:
            if p.get("type") != "tool_call":
                continue
            call: dict[str, Any] = {
                "id": str(p.get("id", "")),
                "name": str(p.get("name", "")),
                "args": p.get("args") if isinstance(p.get("args"), Mapping) else {},
                "status": "cancelled",
                "timestamp": ts,
            }
            self.calls[call["id"]] = call
            calls.append(call)
        record: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "timestamp": ts,
            "type": "gemini",
            "content": text,
        }
        if thoughts:
            record["thoughts"] = thoughts
        if calls:
            record["toolCalls"] = calls
        if self.model:
            record["model"] = self.model
        self.answer = record
        self.out.append(record)

    def _result(self, event: Mapping[str, Any]) -> None:
        call = self.calls.get(str(event.get("call", "")))
        if call is None:
            return
        failed = bool(event.get("error")) or event.get("status") == "failed"
        output = str(event.get("output", ""))
        response = {"error": output} if failed else {"output": output}
        call["status"] = "error" if failed else "success"
        call["result"] = [
            {"functionResponse": {"id": call["id"], "name": call["name"], "response": response}}
        ]
        call["resultDisplay"] = output


WRITER = GeminiWriter()
