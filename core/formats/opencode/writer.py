"""Writing a Forkwise session as a file `opencode import` takes in, then `opencode -s <id>`
continues.

OpenCode's export shape: `{"info": session, "messages": [{"info": message, "parts": [...]}]}`.
Its import inserts the session and every message and part under the ids the file gives
(an id it has already is skipped), so everything gets a new id here, in OpenCode's own
form (`ses_` descending, `msg_` and `prt_` ascending: a time in hex, then random
base62). A message the session shares with an imported OpenCode session is that session's
message and parts as the database holds them, with the new ids (an answer's `parentID`
follows its prompt's new id); the turns added in Forkwise become OpenCode messages.
"""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.store.atomic import write_file_atomically

from ..base import ExportedSession, ExportInput, FormatError, SourceRef, Tool
from . import legacy
from .store import Message, data_dir, load

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_VERSION = "forkwise"


class Ids:
    """OpenCode's identifiers: 12 hex digits of (milliseconds * 4096 + a counter), bitwise
    inverted for a descending id, then 14 random base62 characters."""

    def __init__(self) -> None:
        self.last = 0
        self.counter = 0

    def make(self, prefix: str, descending: bool = False, ms: int | None = None) -> str:
        now = int(time.time() * 1000) if ms is None else ms
        if now != self.last:
            self.last, self.counter = now, 0
        self.counter += 1
        value = now * 0x1000 + self.counter
        if descending:
            value = ~value
        value &= (1 << 48) - 1
        tail = "".join(_BASE62[b % 62] for b in secrets.token_bytes(14))
        return f"{prefix}_{value:012x}{tail}"


def _ms(ts: object) -> int | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


class OpenCodeWriter:
    tool: Tool = "opencode"

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        return data_dir(env, home)

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        ids = Ids()
        new_id = ids.make("ses", descending=True)
        body = _Body(session, ids, new_id)
        for event in session.events:
            body.add(event)
        created = _ms(session.created) or int(time.time() * 1000)
        info = {
            "id": new_id,
            "slug": new_id[4:12],
            "projectID": "global",
            "directory": session.cwd,
            "title": session.title or "Continued from Forkwise",
            "version": _VERSION,
            "time": {"created": created, "updated": max(created, body.clock)},
        }
        data = orjson.dumps({"info": info, "messages": body.messages}, option=orjson.OPT_INDENT_2)
        if out is None:
            folder = root / "forkwise-exports"
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise FormatError(
                    f"cannot create {folder}: {exc.strerror or exc}", path=str(folder)
                ) from exc
            target = folder / f"{new_id}.json"
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
        resume = f"opencode import {shlex.quote(str(target))} && opencode -s {new_id}"
        return ExportedSession(target, new_id, resume)


class _Body:
    def __init__(self, session: ExportInput, ids: Ids, session_id: str) -> None:
        self.session = session
        self.ids = ids
        self.session_id = session_id
        self.messages: list[dict[str, Any]] = []
        self.loaded: dict[str, dict[str, Message]] = {}  # db path -> message id -> message
        self.copied: set[str] = set()
        self.renamed: dict[str, str] = {}  # source message id -> new id
        self.clock = 0
        self.last_user: str | None = None
        self.answer: dict[str, Any] | None = None
        self.calls: dict[str, dict[str, Any]] = {}
        self.model: tuple[str, str] = ("forkwise", "offline")

    def _source_message(self, ref: SourceRef, mid: str) -> Message:
        known = self.loaded.get(ref.path)
        if known is None:
            path = Path(ref.path)
            sessions = (
                legacy.ProjectCache().sessions(path) if legacy.is_session_file(path) else load(path)
            )
            known = {m.id: m for s in sessions for m in s.messages}
            self.loaded[ref.path] = known
        msg = known.get(mid)
        if msg is None:
            raise FormatError(
                f"message {mid} of OpenCode session {ref.id} is no longer in {ref.path}",
                path=ref.path,
            )
        return msg

    def _time(self, ms: int | None) -> int:
        self.clock = max(self.clock + 1, ms or 0) if ms else self.clock + 1
        return self.clock

    def add(self, event: Mapping[str, Any]) -> None:
        etype = event.get("type")
        if etype == "model/select":
            provider, model = event.get("provider"), event.get("model")
            if isinstance(provider, str) and isinstance(model, str):
                self.model = (provider, model)
        src = event.get("src")
        ref = self.session.sources.get(str(src.get("id"))) if isinstance(src, Mapping) else None
        if ref is not None and ref.tool == "opencode" and isinstance(src, Mapping):
            mid = src.get("message")
            if isinstance(mid, str):
                self._copy(ref, mid)
                return
        if etype == "message":
            self._message(event)
        elif etype == "tool/result":
            self._result(event)

    def _copy(self, ref: SourceRef, mid: str) -> None:
        if mid in self.copied:
            return
        self.copied.add(mid)
        msg = self._source_message(ref, mid)
        new = self.ids.make("msg")
        self.renamed[mid] = new
        info = {**msg.data, "id": new, "sessionID": self.session_id}
        parent = info.get("parentID")
        if isinstance(parent, str):
            info["parentID"] = self.renamed.get(parent, parent)
        if info.get("role") == "user":
            self.last_user = new
        timing = info.get("time")
        self._time(timing.get("created") if isinstance(timing, dict) else msg.created)
        parts = [
            {
                **{k: v for k, v in p.items() if k != "id"},
                "id": self.ids.make("prt"),
                "sessionID": self.session_id,
                "messageID": new,
            }
            for p in msg.parts
        ]
        self.messages.append({"info": info, "parts": parts})
        self.answer = None

    def _message(self, event: Mapping[str, Any]) -> None:
        parts_in = [p for p in event.get("parts") or () if isinstance(p, Mapping)]
        at = self._time(_ms(event.get("ts")))
        mid = self.ids.make("msg")
        provider, model = self.model
        parts: list[dict[str, Any]] = []

        def part(**fields: Any) -> dict[str, Any]:
            made = {
                "id": self.ids.make("prt"),
                "sessionID": self.session_id,
                "messageID": mid,
                **fields,
            }
            parts.append(made)
            return made

        if event.get("role") == "user":
            self.last_user = mid
            self.answer = None
            info: dict[str, Any] = {
                "id": mid,
                "sessionID": self.session_id,
                "role": "user",
                "time": {"created": at},
                "agent": "build",
                "model": {"providerID": provider, "modelID": model},
            }
            for p in parts_in:
                if p.get("type") == "text":
                    part(type="text", text=str(p.get("text", "")))
            self.messages.append({"info": info, "parts": parts})
            return
        info = {
            "id": mid,
            "sessionID": self.session_id,
            "role": "assistant",
            "time": {"created": at, "completed": at},
            "parentID": self.last_user or mid,
            "modelID": model,
            "providerID": provider,
            "mode": "build",
            "agent": "build",
            "path": {"cwd": self.session.cwd, "root": self.session.cwd},
            "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "finish": "stop",
        }
        for p in parts_in:
            kind = p.get("type")
            if kind == "text":
                part(type="text", text=str(p.get("text", "")), time={"start": at, "end": at})
            elif kind == "reasoning":
                part(type="reasoning", text=str(p.get("text", "")), time={"start": at, "end": at})
            elif kind == "tool_call":
                args = p.get("args") if isinstance(p.get("args"), Mapping) else {}
                made = part(
                    type="tool",
                    callID=str(p.get("id", "")),
                    tool=str(p.get("name", "")),
                    state={
                        "status": "error",
                        "input": dict(args) if args else {},
                        "error": "no result",
                        "time": {"start": at, "end": at},
                    },
                )
                self.calls[made["callID"]] = made
                info["finish"] = "tool-calls"
        self.answer = info
        self.messages.append({"info": info, "parts": parts})

    def _result(self, event: Mapping[str, Any]) -> None:
        made = self.calls.get(str(event.get("call", "")))
        if made is None:
            return
        state = made["state"]
        output = str(event.get("output", ""))
        if event.get("error"):
            made["state"] = {**state, "status": "error", "error": output}
        else:
            made["state"] = {
                "status": "completed",
                "input": state["input"],
                "output": output,
                "title": str(event.get("title") or made["tool"]),
                "metadata": {},
                "time": state["time"],
            }


WRITER = OpenCodeWriter()
