"""Writes a Forkwise session as a Codex thread that `codex resume <id>` continues.

The file is what Codex's own fork writes: a new `session_meta` first (a new UUIDv7 `id`,
`forked_from_id` = the source thread, the source's cwd/cli_version/source/provider), then
the source's header line and every source line the shared events cite, byte for byte, then
the turns added in Forkwise rendered as Codex records them (`task_started`, `turn_context`,
`response_item` messages / function calls / outputs with their `event_msg` twins,
`task_complete` or `turn_aborted`). The thread name goes to `session_index.jsonl`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ...errors import SourceNotFound, StaleSession, StorageError
from ..base import ExportedSession, ExportInput, Tool
from .lines import SESSION_INDEX, SESSIONS, codex_home, read_bytes, rollout_files
from .mapping import content_text, is_injected

TOOL: Tool = "codex"
_DROP_FROM_META = ("history_base", "forked_from_ordinal_exclusive", "parent_thread_id")


def uuid7() -> str:
    """A UUIDv7 (time-ordered), the kind of thread id Codex makes."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _line(ts: str, kind: str, payload: Mapping[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload})


class _Sources:
    """The source files the events cite, each read once, found through `sources` or, for a
    file of a Codex home the header does not name, by its thread id under `root`."""

    def __init__(self, sources: Mapping[str, Any], root: Path) -> None:
        self._refs = sources
        self._root = root
        self._lines: dict[str, list[bytes]] = {}
        self._bare: dict[str, str | None] = {}

    def path(self, sid: str) -> Path:
        ref = self._refs.get(sid)
        if ref is not None and Path(ref.path).is_file():
            return Path(ref.path)
        home = codex_home(Path(ref.path)) if ref is not None else None
        for base in (home, self._root):
            if base is None:
                continue
            for folder in (base / SESSIONS, base / "archived_sessions"):
                if folder.is_dir():
                    for p in rollout_files(folder):
                        if p.name.endswith((f"-{sid}.jsonl", f"-{sid}.jsonl.zst")):
                            return p
        raise SourceNotFound(f"the Codex rollout of {sid} is not on this machine", source=sid)

    def lines(self, sid: str) -> list[bytes]:
        if sid not in self._lines:
            path = self.path(sid)
            self._lines[sid] = read_bytes(path).split(b"\n")
        return self._lines[sid]

    def line(self, sid: str, no: int) -> bytes:
        lines = self.lines(sid)
        if not 1 <= no <= len(lines) or not lines[no - 1].strip():
            raise StaleSession(f"line {no} of the rollout of {sid} is gone", source=sid, line=no)
        return lines[no - 1]

    def bare(self, sid: str) -> str | None:
        """For a rollout from before the envelope (a bare meta on line 1): its time."""
        if sid not in self._bare:
            lines = self.lines(sid)
            found = None
            if lines and not lines[0].startswith(b'{"timestamp"'):
                first = orjson.loads(lines[0])
                if isinstance(first, dict) and "payload" not in first and "type" not in first:
                    found = str(first.get("timestamp", ""))
            self._bare[sid] = found
        return self._bare[sid]

    def header_line(self, sid: str) -> int | None:
        """The number of the source's first `session_meta` line."""
        if self.bare(sid) is not None:
            return 1
        for no, raw in enumerate(self.lines(sid), 1):
            if b'"session_meta"' in raw and orjson.loads(raw).get("type") == "session_meta":
                return no
        return None

    def header(self, sid: str) -> dict[str, Any] | None:
        """The payload of the source's first `session_meta` line."""
        no = self.header_line(sid)
        if no is None:
            return None
        record = orjson.loads(self.line(sid, no))
        payload = record if self.bare(sid) is not None else record.get("payload")
        return payload if isinstance(payload, dict) else None

    def copied(self, sid: str, no: int) -> list[bytes]:
        """Line `no` as the new rollout holds it: the source's bytes, except that a line
        from before the envelope is put in one (Codex reads nothing else now), with the UI
        record Codex keeps next to a message; its meta and `record_type` markers are left
        out."""
        raw = self.line(sid, no)
        ts = self.bare(sid)
        if ts is None:
            return [raw]
        record = orjson.loads(raw)
        if no == 1 or not isinstance(record, dict) or "record_type" in record:
            return []
        out = [_line(ts, "response_item", record)]
        if record.get("type") == "message":
            text, _ = content_text(record.get("content"))
            if record.get("role") == "assistant":
                out.append(_line(ts, "event_msg", {"type": "agent_message", "message": text}))
            elif record.get("role") == "user" and not is_injected(text):
                out.append(_line(ts, "event_msg", _user_message(text)))
        return out


def _user_message(text: str) -> dict[str, Any]:
    return {
        "type": "user_message",
        "message": text,
        "images": [],
        "local_images": [],
        "text_elements": [],
    }


def _rolls_back(raw: bytes) -> bool:
    record = orjson.loads(raw)
    payload = record.get("payload") if isinstance(record, dict) else None
    return isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"


def _legacy_twins(raw: bytes) -> list[bytes]:
    """The UI records a legacy rollout keeps next to a paginated `item_completed` line.

    A paginated source (Codex 0.171+) records a message for the UI as `item_completed`; the
    legacy rollout this writer makes is read by Codex from `user_message`, `agent_message`
    and `agent_reasoning` records, so each such item gets its legacy twin after it (the
    copied line itself is unchanged)."""
    record = orjson.loads(raw)
    payload = record.get("payload")
    item = payload.get("item") if isinstance(payload, dict) else None
    if record.get("type") != "event_msg" or record.get("ordinal") is None:
        return []  # a legacy source keeps its own twins
    if not isinstance(item, dict):
        return []
    ts, kind = str(record.get("timestamp", "")), item.get("type")
    text, _ = content_text(item.get("content"))
    if kind == "UserMessage":
        return [_line(ts, "event_msg", _user_message(text))]
    if kind == "AgentMessage":
        return [_line(ts, "event_msg", {"type": "agent_message", "message": text})]
    if kind == "Reasoning":
        summary = item.get("summary_text") or []
        return [
            _line(ts, "event_msg", {"type": "agent_reasoning", "text": str(part)})
            for part in summary
        ]
    return []


class CodexWriter:
    """The Writer of base.py for Codex."""

    tool: Tool = TOOL

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        if out is not None and not out.parent.is_dir():
            raise StorageError(f"no folder {out.parent} to write {out.name} in", path=str(out))
        now = datetime.now(UTC)
        new_id = uuid7()
        sources = _Sources(session.sources, root)

        cited: list[tuple[str, int]] = []
        seen: set[tuple[str, int]] = set()
        last_cited = -1
        for index, event in enumerate(session.events):
            src = event.get("src")
            if isinstance(src, Mapping) and isinstance(src.get("id"), str):
                last_cited = index
                for no in sorted(src.get("lines") or []):
                    if (src["id"], no) not in seen:
                        seen.add((src["id"], no))
                        cited.append((src["id"], no))

        # the thread forked from is the newest source cited; the oldest one's header opens
        # the copied history, as in a fork Codex writes itself
        root_src = cited[0][0] if cited else None
        latest = cited[-1][0] if cited else None
        body: list[bytes] = []
        meta_of = sources.header(latest) if latest else None
        body.append(_line(_stamp(now), "session_meta", self._meta(session, new_id, now, meta_of)))
        header = sources.header_line(root_src) if root_src else None
        if root_src and header and (root_src, header) not in seen and not sources.bare(root_src):
            body.append(sources.line(root_src, header))
        for sid, no in cited:
            for raw in sources.copied(sid, no):
                if b'"thread_rolled_back"' in raw and _rolls_back(raw):
                    continue  # already applied: the turns it drops are not in this file
                body.append(raw)
                if b'"item_completed"' in raw:
                    body.extend(_legacy_twins(raw))
        context = _last_turn_context(body)
        added = _Renderer(session, context).render(session.events[last_cited + 1 :])
        body.extend(added)
        data = b"\n".join(body) + b"\n"

        stamp = now.astimezone()
        if out is None:
            folder = root / SESSIONS / stamp.strftime("%Y") / stamp.strftime("%m")
            folder = folder / stamp.strftime("%d")
            folder.mkdir(parents=True, exist_ok=True)
            out = folder / f"rollout-{stamp.strftime('%Y-%m-%dT%H-%M-%S')}-{new_id}.jsonl"
        _write_new(out, data)
        if session.title and out.is_relative_to(root):
            _append_name(root, new_id, session.title, now)
        return ExportedSession(path=out, id=new_id, resume=f"codex resume {new_id}")

    def _meta(
        self, session: ExportInput, new_id: str, now: datetime, source: dict[str, Any] | None
    ) -> dict[str, Any]:
        if source is None:
            return {
                "id": new_id,
                "timestamp": _stamp(now),
                "cwd": session.cwd,
                "originator": "forkwise",
                "cli_version": "0.0.0",
                "source": "cli",
                "model_provider": str((session.model or {}).get("provider") or "openai"),
            }
        parent = source.get("id") or source.get("session_id")
        meta: dict[str, Any] = {}
        for key, value in source.items():
            if key in _DROP_FROM_META or key == "forked_from_id":
                continue
            meta[key] = new_id if key in ("id", "session_id") else value
            if key == "id":
                meta["forked_from_id"] = parent
        meta.setdefault("forked_from_id", parent)
        meta["id"] = new_id
        meta["timestamp"] = _stamp(now)
        if session.cwd:
            meta["cwd"] = session.cwd
        # what a SessionMeta must have (a meta from before the envelope lacks some)
        meta.setdefault("cwd", "")
        meta.setdefault("originator", "forkwise")
        meta.setdefault("cli_version", "0.0.0")
        if "history_mode" in meta:
            meta["history_mode"] = "legacy"
        return meta


def _last_turn_context(lines: list[bytes]) -> dict[str, Any] | None:
    for raw in reversed(lines):
        if b'"turn_context"' in raw:
            record = orjson.loads(raw)
            if record.get("type") == "turn_context" and isinstance(record.get("payload"), dict):
                payload: dict[str, Any] = record["payload"]
                return payload
    return None


class _Renderer:
    """Forkwise events added after the fork -> Codex rollout lines."""

    def __init__(self, session: ExportInput, context: dict[str, Any] | None) -> None:
        self.cwd = session.cwd
        self.context = dict(context) if context else None
        model = session.model or {}
        self.model = str(model.get("model") or (context or {}).get("model") or "gpt-5")
        effort = model.get("reasoning") or (context or {}).get("effort")
        self.effort = effort if isinstance(effort, str) else None
        self.turn: str | None = None
        self.last_text = ""
        self.out: list[bytes] = []

    def _add(self, ts: str, kind: str, payload: Mapping[str, Any]) -> None:
        self.out.append(_line(ts, kind, payload))

    def render(self, events: Any) -> list[bytes]:
        for event in events:
            kind, ts = event.get("type"), str(event.get("ts") or _stamp(datetime.now(UTC)))
            if kind == "model/select":
                self.model = str(event.get("model") or self.model)
                effort = event.get("reasoning")
                self.effort = effort if isinstance(effort, str) else None
            elif kind == "turn/start":
                self._start(str(event.get("turn")), ts)
            elif kind == "message":
                self._message(event, ts)
            elif kind == "tool/result":
                output = event.get("output")
                text = output if isinstance(output, str) else orjson.dumps(output).decode()
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": str(event.get("call")),
                        "output": text,
                    },
                )
            elif kind == "turn/end":
                self._end(str(event.get("status")), ts)
        return self.out

    def _start(self, turn: str, ts: str) -> None:
        self.turn, self.last_text = turn, ""
        started = int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp())
        self._add(
            ts,
            "event_msg",
            {
                "type": "task_started",
                "turn_id": turn,
                "started_at": started,
                "model_context_window": None,
                "collaboration_mode_kind": "default",
            },
        )
        context: dict[str, Any] = (
            dict(self.context)
            if self.context
            else {
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {
                    "type": "workspace-write",
                    "network_access": False,
                    "exclude_tmpdir_env_var": False,
                    "exclude_slash_tmp": False,
                },
                "summary": "auto",
            }
        )
        context["turn_id"] = turn
        context["cwd"] = self.cwd or context.get("cwd")
        context["model"] = self.model
        context.pop("root_turn_id", None)
        if self.effort:
            context["effort"] = self.effort
        else:
            context.pop("effort", None)
        mode = context.get("collaboration_mode")
        if isinstance(mode, dict) and isinstance(mode.get("settings"), dict):
            settings = dict(mode["settings"], model=self.model, reasoning_effort=self.effort)
            context["collaboration_mode"] = dict(mode, settings=settings)
        self._add(ts, "turn_context", context)

    def _message(self, event: Mapping[str, Any], ts: str) -> None:
        parts = event.get("parts") or []
        if event.get("role") == "user":
            text, _ = content_text(parts)
            self._add(
                ts,
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            )
            self._add(ts, "event_msg", _user_message(text))
            return
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                text = str(part.get("text", ""))
                self.last_text = text
                self._add(ts, "event_msg", {"type": "agent_message", "message": text})
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    },
                )
            elif kind == "reasoning":
                text = str(part.get("text", ""))
                self._add(ts, "event_msg", {"type": "agent_reasoning", "text": text})
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": text}],
                        "content": None,
                        "encrypted_content": None,
                    },
                )
            elif kind == "tool_call":
                args = part.get("args")
                arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
                self._add(
                    ts,
                    "response_item",
                    {
                        "type": "function_call",
                        "name": str(part.get("name")),
                        "arguments": arguments,
                        "call_id": str(part.get("id")),
                    },
                )

    def _end(self, status: str, ts: str) -> None:
        if self.turn is None:
            return
        if status == "completed":
            self._add(
                ts,
                "event_msg",
                {
                    "type": "task_complete",
                    "turn_id": self.turn,
                    "last_agent_message": self.last_text or None,
                },
            )
        else:
            self._add(
                ts,
                "event_msg",
                {
                    "type": "turn_aborted",
                    "turn_id": self.turn,
                    "reason": "interrupted",
                },
            )
        self.turn = None


def _write_new(path: Path, data: bytes) -> None:
    """Write the whole file or nothing (a temporary file renamed into place)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}", path=str(path)) from exc


def _append_name(root: Path, thread_id: str, name: str, now: datetime) -> None:
    """Name the thread the way Codex does: one more line in `session_index.jsonl`."""
    entry = {
        "id": thread_id,
        "thread_name": name,
        "updated_at": now.isoformat(timespec="microseconds").replace("+00:00", "Z"),
    }
    try:
        with open(root / SESSION_INDEX, "ab") as fh:
            fh.write(orjson.dumps(entry) + b"\n")
    except OSError as exc:
        raise StorageError(
            f"cannot name the thread: {exc.strerror or exc}", path=str(root)
        ) from exc


WRITER = CodexWriter()
