"""Deterministic OpenCode databases, shaped as OpenCode 1.18 writes `opencode.db` (WAL mode;
the `project`, `session`, `message` and `part` tables with the columns OpenCode's
migrations make, message and part `data` as JSON without their ids), and OpenCode's own
fork (`POST /session/:id/fork`): the messages before the fork point copied under new
ids with the same content and times, titled "… (fork #N)", no `parent_id`.

tests/formats/test_opencode_cli.py makes the same shapes with the real `opencode`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import orjson

CWD = "/home/ada/project"
START = 1_772_442_000_000  # 2026-03-02T09:00:00Z
PROVIDER = "anthropic"
MODEL = "claude-sonnet-4-5"

_SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
  time_created integer NOT NULL, time_updated integer NOT NULL, sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text,
  parent_id text, slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, metadata text, cost real DEFAULT 0 NOT NULL,
  tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL,
  tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL,
  tokens_cache_write integer DEFAULT 0 NOT NULL, revert text, permission text, agent text,
  model text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
"""


def tokens(inp: int = 100, out: int = 20) -> dict[str, Any]:
    return {"total": inp + out, "input": inp, "output": out, "reasoning": 0,
            "cache": {"write": 0, "read": 0}}


class OpenCodeDb:
    """An OpenCode database built session by session, with a fixed clock and ids."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(_SCHEMA)
        self.conn.execute(
            "INSERT INTO project VALUES ('global', '/', NULL, NULL, ?, ?, '[]')", (START, START)
        )
        self.clock = START
        self._n = 0

    def _tick(self, ms: int = 2000) -> int:
        self.clock += ms
        return self.clock

    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}_{self._n:012x}fixture{self._n:07d}"

    def session(self, title: str, *, parent: str | None = None, cwd: str = CWD) -> str:
        sid = self._id("ses")
        now = self._tick()
        self.conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, path, title, version,"
            " time_created, time_updated) VALUES (?, 'global', ?, 'calm-river', ?, '', ?, '1.18.33', ?, ?)",
            (sid, parent, cwd, title, now, now),
        )
        return sid

    def _touch(self, sid: str) -> None:
        self.conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (self.clock, sid))

    def _message(self, sid: str, data: dict[str, Any], parts: list[dict[str, Any]],
                 mid: str | None = None) -> str:
        mid = mid or self._id("msg")
        created = data["time"]["created"]
        self.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                          (mid, sid, created, created, orjson.dumps(data).decode()))
        for part in parts:
            self.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                              (self._id("prt"), mid, sid, created, created,
                               orjson.dumps(part).decode()))
        self._touch(sid)
        return mid

    def user(self, sid: str, text: str) -> str:
        data = {"role": "user", "time": {"created": self._tick()}, "agent": "build",
                "model": {"providerID": PROVIDER, "modelID": MODEL}, "summary": {"diffs": []}}
        return self._message(sid, data, [{"type": "text", "text": text}])

    def assistant(self, sid: str, parent: str, text: str = "", *,
                  tools: list[dict[str, Any]] = (), reasoning: str | None = None,  # type: ignore[assignment]
                  finish: str = "stop", error: dict[str, Any] | None = None,
                  completed: bool = True) -> str:
        start = self._tick()
        data: dict[str, Any] = {
            "parentID": parent, "role": "assistant", "mode": "build", "agent": "build",
            "path": {"cwd": CWD, "root": "/"}, "cost": 0.0012, "tokens": tokens(),
            "modelID": MODEL, "providerID": PROVIDER, "time": {"created": start},
        }
        if completed:
            data["time"]["completed"] = start + 500
            data["finish"] = finish
        if error is not None:
            data["error"] = error
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        if reasoning:
            parts.append({"type": "reasoning", "text": reasoning,
                          "time": {"start": start, "end": start + 10}})
        for tool in tools:
            state = {"status": tool.get("status", "completed"), "input": tool.get("input", {}),
                     "time": {"start": start + 20, "end": start + 40}}
            if state["status"] == "completed":
                state |= {"output": tool.get("output", ""), "title": tool.get("title", ""),
                          "metadata": {}}
            elif state["status"] == "error":
                state["error"] = tool.get("output", "failed")
            parts.append({"type": "tool", "tool": tool["tool"], "callID": tool["call"],
                          "state": state})
        if text:
            parts.append({"type": "text", "text": text,
                          "time": {"start": start + 50, "end": start + 60}})
        parts.append({"reason": finish, "type": "step-finish", "tokens": tokens(), "cost": 0.0012})
        return self._message(sid, data, parts)

    def exchange(self, sid: str, prompt: str, answer: str) -> tuple[str, str]:
        asked = self.user(sid, prompt)
        return asked, self.assistant(sid, asked, answer)

    def fork(self, sid: str, before: str | None = None) -> str:
        """OpenCode's fork: the messages before `before` (all without it) copied."""
        title = self.conn.execute("SELECT title FROM session WHERE id = ?", (sid,)).fetchone()[0]
        child = self.session(f"{title} (fork #1)")
        rows = self.conn.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)
        ).fetchall()
        renamed: dict[str, str] = {}
        for mid, data in rows:
            if before is not None and mid == before:
                break
            info = orjson.loads(data)
            new = self._id("msg")
            renamed[mid] = new
            if "parentID" in info:
                info["parentID"] = renamed.get(info["parentID"], info["parentID"])
            parts = [orjson.loads(p) for (p,) in self.conn.execute(
                "SELECT data FROM part WHERE message_id = ? ORDER BY id", (mid,))]
            self._message(child, info, parts, new)
        return child

    def revert(self, sid: str, mid: str) -> None:
        self.conn.execute("UPDATE session SET revert = ? WHERE id = ?",
                          (orjson.dumps({"messageID": mid}).decode(), sid))

    def close(self) -> None:
        self.conn.close()


def settled(path: Path) -> Path:
    """Date the database (and its WAL) back past the reader's live window."""
    old = time.time() - 3600
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            os.utime(p, (old, old))
    return path


def to_storage(db: OpenCodeDb, storage: Path) -> list[Path]:
    """The database's sessions as OpenCode's older versions kept them: one indented JSON
    file per session, message and part (`storage/session/<projectID>/<id>.json`,
    `storage/message/<sessionID>/<id>.json`, `storage/part/<messageID>/<id>.json`).
    Returns the session files."""
    files = []
    conn = db.conn
    for row in conn.execute("SELECT id, parent_id, directory, title, version, revert,"
                            " time_created, time_updated FROM session").fetchall():
        sid, parent, directory, title, version, revert, created, updated = row
        info: dict[str, Any] = {"id": sid, "projectID": "global", "directory": directory,
                                "title": title, "version": version,
                                "time": {"created": created, "updated": updated}}
        if parent:
            info["parentID"] = parent
        if revert:
            info["revert"] = orjson.loads(revert)
        path = storage / "session" / "global" / f"{sid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(info, option=orjson.OPT_INDENT_2))
        files.append(path)
        for mid, data in conn.execute("SELECT id, data FROM message WHERE session_id = ?", (sid,)):
            message = {"id": mid, "sessionID": sid, **orjson.loads(data)}
            target = storage / "message" / sid / f"{mid}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(orjson.dumps(message, option=orjson.OPT_INDENT_2))
            for pid, pdata in conn.execute("SELECT id, data FROM part WHERE message_id = ?", (mid,)):
                part = {"id": pid, "sessionID": sid, "messageID": mid, **orjson.loads(pdata)}
                target = storage / "part" / mid / f"{pid}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(orjson.dumps(part, option=orjson.OPT_INDENT_2))
    return sorted(files)
