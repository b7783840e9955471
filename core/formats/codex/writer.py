"""Writes a Forkwise session as a Codex thread that `codex resume <id>` continues.

The file is what Codex's own fork writes: a new `session_meta` first (a new UUIDv7 `id`,
`forked_from_id` = the source thread, the source's cwd/cli_version/source/provider), then
the source's header line and every source line the shared events cite, byte for byte, then
the turns added in Forkwise rendered as Codex records them (`task_started`, `turn_context`,
`response_item` messages / function calls / outputs with their `event_msg` twins,
`task_complete` or `turn_aborted`). The thread name goes to `session_index.jsonl`.

Where a copied line cannot stay as it is, and why: a `thread_rolled_back` line is left out
(the reader applied it; the turns it drops are not in the export); a line of a rollout from
before the `{timestamp, type, payload}` envelope is put in one; a paginated (0.171+) source
gets the UI records a legacy rollout shows its messages from added after its own lines
(the file written is a legacy one: a paginated rollout must number every line).
"""

from __future__ import annotations

import errno
import logging
import os
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ...errors import SourceNotFound, StaleSession, StorageError
from ...safe_read import NotRegularFile, open_append
from ..base import ExportedSession, ExportInput, Tool, make_private_folders, write_new_file
from .lines import SESSION_INDEX, SESSIONS, codex_home, read_bytes, rollout_files
from .mapping import content_text, is_injected
from .render import Renderer, last_turn_context, legacy_twins, line, stamp, user_message

log = logging.getLogger(__name__)

TOOL: Tool = "codex"
_DROP_FROM_META = ("history_base", "forked_from_ordinal_exclusive", "parent_thread_id")


def uuid7() -> str:
    """A UUIDv7 (time-ordered), the kind of thread id Codex makes."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


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
        out = [line(ts, "response_item", record)]
        if record.get("type") == "message":
            text, _ = content_text(record.get("content"))
            if record.get("role") == "assistant":
                out.append(line(ts, "event_msg", {"type": "agent_message", "message": text}))
            elif record.get("role") == "user" and not is_injected(text):
                out.append(line(ts, "event_msg", user_message(text)))
        return out


def _rolls_back(raw: bytes) -> bool:
    record = orjson.loads(raw)
    payload = record.get("payload") if isinstance(record, dict) else None
    return isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"


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
                ref = session.sources.get(src["id"])
                if ref is not None and ref.tool != "codex":
                    continue  # another tool's lines: written as new Codex items below
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
        body.append(line(stamp(now), "session_meta", self._meta(session, new_id, now, meta_of)))
        header = sources.header_line(root_src) if root_src else None
        if root_src and header and (root_src, header) not in seen and not sources.bare(root_src):
            body.append(sources.line(root_src, header))
        for sid, no in cited:
            for raw in sources.copied(sid, no):
                if b'"thread_rolled_back"' in raw and _rolls_back(raw):
                    continue  # already applied: the turns it drops are not in this file
                body.append(raw)
                if b'"item_completed"' in raw:
                    body.extend(legacy_twins(raw))
        context = last_turn_context(body)
        added = Renderer(session, context).render(session.events[last_cited + 1 :])
        body.extend(added)
        data = b"\n".join(body) + b"\n"

        local = now.astimezone()
        if out is None:
            folder = root / SESSIONS / local.strftime("%Y") / local.strftime("%m")
            folder = folder / local.strftime("%d")
            make_private_folders(folder)
            out = folder / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{new_id}.jsonl"
        write_new_file(out, data)
        if session.title and out.is_relative_to(root):
            _append_name(root, new_id, session.title, now)
        return ExportedSession(path=out, id=new_id, resume=f"codex resume {new_id}")

    def _meta(
        self, session: ExportInput, new_id: str, now: datetime, source: dict[str, Any] | None
    ) -> dict[str, Any]:
        if source is None:
            return {
                "id": new_id,
                "timestamp": stamp(now),
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
        meta["timestamp"] = stamp(now)
        if session.cwd:
            meta["cwd"] = session.cwd
        # what a SessionMeta must have (a meta from before the envelope lacks some)
        meta.setdefault("cwd", "")
        meta.setdefault("originator", "forkwise")
        meta.setdefault("cli_version", "0.0.0")
        if "history_mode" in meta:
            meta["history_mode"] = "legacy"
        return meta


def _append_name(root: Path, thread_id: str, name: str, now: datetime) -> None:
    """Name the thread the way Codex does: one more line in `session_index.jsonl`."""
    entry = {
        "id": thread_id,
        "thread_name": name,
        "updated_at": now.isoformat(timespec="microseconds").replace("+00:00", "Z"),
    }
    try:
        # not through a FIFO, device or link put in the index's place (safe_read): the
        # name is a convenience, the rollout is written already; say so and go on
        fd = open_append(root / SESSION_INDEX)
    except OSError as exc:
        if isinstance(exc, NotRegularFile) or exc.errno in (errno.ELOOP, errno.ENXIO):
            log.warning("%s is not a regular file: the thread is not named", SESSION_INDEX)
            return
        raise StorageError(
            f"cannot name the thread: {exc.strerror or exc}", path=str(root)
        ) from exc
    try:
        os.write(fd, orjson.dumps(entry) + b"\n")
    except OSError as exc:
        raise StorageError(
            f"cannot name the thread: {exc.strerror or exc}", path=str(root)
        ) from exc
    finally:
        os.close(fd)


WRITER = CodexWriter()
