"""Codex's side of `python -m forkwise.core.bench --peers`.

The conversations the Forkwise figures use (`synth.session_lines`, same seeds) are written
as Codex rollouts by Forkwise's own Codex writer (`formats.codex.WRITER`: a `session_meta`,
then per turn `task_started`, `turn_context`, the messages, function calls and outputs as
`response_item`s with their `event_msg` twins, `task_complete`), one file per thread under
`sessions/YYYY/MM/DD/`, named `rollout-<time>-<thread id>.jsonl` with one second between
threads (Codex pages its list by the second in the file name), and named in
`session_index.jsonl`. Then `codex app-server` (installed with `app_server.install_codex`)
does each operation in a fresh process, offline (the configured provider is never called):

- list: `thread/list`, 100 a page until it has no next cursor, over a home whose SQLite
  state (`state_*.sqlite`) a previous run built; also with that state removed first (the
  server rebuilds it from the rollouts) and with `useStateDbOnly` (no scan of the rollouts
  for repairs);
- fork: `thread/fork` of the long thread with `excludeTurns` (the new rollout written, no
  turns sent back);
- context: `thread/resume` of the long thread with `excludeTurns` (its history loaded into
  a live thread, ready for the next turn); read: `thread/read` with `includeTurns` (the
  whole conversation sent back as turns and items).

A figure is the wall time from starting the process to the arrival of the last answer's
line (the client's decoding of it is left out); the process is ended afterwards, untimed.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.bench.app_server import AppServer, install_codex
from forkwise.core.bench.synth import session_lines
from forkwise.core.formats.base import ExportInput
from forkwise.core.formats.codex import WRITER

#: the offline model of the synthetic conversations, as a Codex provider nothing listens for
CONFIG = """model = "offline-echo"
model_provider = "offline"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.offline]
name = "offline"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
"""
MODEL = {"provider": "offline", "model": "offline-echo"}
PAGE = 100
START = datetime(2026, 1, 1, tzinfo=UTC)


def write_rollout(home: Path, lines: Iterator[bytes], created: datetime) -> Path:
    """One Forkwise session (header line, then events) as a Codex thread in `home`, made by
    Forkwise's Codex writer; the file is named for `created`."""
    header = orjson.loads(next(lines))
    events = [orjson.loads(raw) for raw in lines]
    title = next((e["title"] for e in events if e["type"] == "session/title"), None)
    folder = home / "sessions" / created.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    session = ExportInput(
        session_id=header["id"],
        cwd=header["cwd"],
        title=title,
        created=header["created"],
        events=events,
        sources={},
        model=MODEL,
    )
    written = WRITER.export(session, home, folder / f"{header['id']}.writing")
    path = folder / f"rollout-{created.strftime('%Y-%m-%dT%H-%M-%S')}-{written.id}.jsonl"
    os.replace(written.path, path)
    return path


def thread_id(rollout: Path) -> str:
    """The thread id in a rollout's file name (the last 36 characters of its stem)."""
    return rollout.stem[-36:]


def codex_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CONFIG)
    return home


def write_codex_home(home: Path, sessions: int, per: int, seed: int = 7) -> Path:
    """The conversations of `synth.write_store(…, sessions, per, seed)`, as Codex threads."""
    rng = random.Random(seed)
    codex_home(home)
    for i in range(sessions):
        lines = session_lines(rng, f"bench-{i:06d}", per)
        write_rollout(home, lines, START + timedelta(seconds=i))
    return home


def drop_state(home: Path) -> None:
    """Remove Codex's SQLite state (threads, names, …): the next server rebuilds it."""
    for path in home.glob("state_*.sqlite*"):
        path.unlink()


class CodexRunner:
    """Fresh `codex app-server` processes over one home; every call is bounded."""

    def __init__(self, binary: Path, log: Path) -> None:
        self.binary = binary
        self.log = log

    def _timed(self, home: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[float, Any]:
        start = time.perf_counter()
        server = AppServer(self.binary, home, self.log, client="forkwise-bench")
        try:
            result = None
            for method, params in calls:
                result = server.request(method, params, timeout=600)
            return server.answered_at - start, result
        finally:
            server.close()

    def list(self, home: Path, expected: int, *, db_only: bool = False) -> float:
        """Every thread, a page at a time, in one fresh process."""
        start = time.perf_counter()
        server = AppServer(self.binary, home, self.log, client="forkwise-bench")
        try:
            cursor: str | None = None
            seen = 0
            for _ in range(expected // PAGE + 2):
                params: dict[str, Any] = {"limit": PAGE, "cursor": cursor}
                if db_only:
                    params["useStateDbOnly"] = True
                page = server.request("thread/list", params, timeout=600)
                seen += len(page["data"])
                cursor = page["nextCursor"]
                if not cursor:
                    break
            took = server.answered_at - start
        finally:
            server.close()
        if seen != expected or cursor:
            raise RuntimeError(f"codex listed {seen} threads, wanted {expected}")
        return took

    def fork(self, home: Path, thread: str) -> float:
        params = {"threadId": thread, "excludeTurns": True}
        took, result = self._timed(home, [("thread/fork", params)])
        if result["thread"]["id"] == thread:
            raise RuntimeError("codex's fork has its parent's id")
        return took

    def resume(self, home: Path, thread: str) -> float:
        params = {"threadId": thread, "excludeTurns": True}
        took, result = self._timed(home, [("thread/resume", params)])
        if result["thread"]["id"] != thread:
            raise RuntimeError("codex resumed another thread")
        return took

    def read(self, home: Path, thread: str, turns: int) -> float:
        params = {"threadId": thread, "includeTurns": True}
        took, result = self._timed(home, [("thread/read", params)])
        if len(result["thread"]["turns"]) != turns:
            got = len(result["thread"]["turns"])
            raise RuntimeError(f"codex read {got} turns, wanted {turns}")
        return took


@dataclass
class CodexSide:
    """The homes and the long thread a peers run measures Codex on."""

    runner: CodexRunner
    list_home: Path
    big_home: Path
    big: Path
    sessions: int
    turns: int

    @property
    def big_id(self) -> str:
        return thread_id(self.big)

    def drop_forks(self) -> None:
        for path in (self.big_home / "sessions").rglob("rollout-*.jsonl"):
            if path != self.big:
                path.unlink()


def prepare_codex(tmp: Path, cache: Path, sessions: int, per: int, events: int) -> CodexSide:
    """Install Codex (first use), write both homes, and let one untimed server build the
    list home's SQLite state."""
    runner = CodexRunner(install_codex(cache), tmp / "codex-app-server.log")
    list_home = write_codex_home(tmp / "peers-codex", sessions, per)
    big_home = codex_home(tmp / "peers-codex-big")
    lines = list(session_lines(random.Random(11), "big", events))
    turns = sum(1 for raw in lines if b'"turn/start"' in raw)
    big = write_rollout(big_home, iter(lines), START)
    runner.list(list_home, sessions)
    return CodexSide(runner, list_home, big_home, big, sessions, turns)
