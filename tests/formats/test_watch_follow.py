"""The agents' folders followed with the kernel's notifications: a line a tool appends to
its session (a row OpenCode writes into its database's WAL) reaches the store's catalogue
without any pass on a clock — the watcher's poll is set to an hour, and the test waits on
the catalogue's own notification."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from claude_fixtures import SID as CLAUDE_SID
from claude_fixtures import Transcript, project_file
from codex_fixtures import basic, thread_id
from gemini_fixtures import SID as GEMINI_SID
from gemini_fixtures import GeminiSession
from opencode_fixtures import OpenCodeDb
from pi_fixtures import coding_session as pi_session

from forkwise.core.formats.base import source_session_id

HOUR = 3600.0
#: seconds a notification is waited for at most (bounded; it comes in well under one)
WITHIN = 10.0


def append(path: Path, data: bytes) -> None:
    """Append as the tools do: one write at the end of the open file."""
    with path.open("ab") as f:
        f.write(data)


class Agent:
    """One tool's session written where the tool keeps it, then grown by a line or two."""

    def __init__(self, tool: str, home: Path) -> None:
        self.tool, self.home = tool, home
        self.env: dict[str, str] = {}
        self.db: OpenCodeDb | None = None

    def start(self) -> str:
        """Write the session; its Forkwise id."""
        home = self.home
        if self.tool == "claude":
            self.env["CLAUDE_CONFIG_DIR"] = str(home / ".claude")
            t = Transcript(CLAUDE_SID)
            t.exchange("first question", "first answer")
            self.path = t.write(project_file(home / ".claude", t))
            self.more: Callable[[], bytes] = lambda: _grown(t, lambda: t.exchange("more", "yes"))
            return f"claude-{CLAUDE_SID}"
        if self.tool == "codex":
            self.env["CODEX_HOME"] = str(home / ".codex")
            rollout = basic(5)
            self.path = rollout.write(home / ".codex")

            def more() -> bytes:
                before = rollout.raw()
                rollout.prompt("one more")
                rollout.answer("More.", item_id="msg_more")
                return rollout.raw()[len(before) :]

            self.more = more
            return f"codex-{thread_id(5)}"
        if self.tool == "pi":
            self.env["PI_CODING_AGENT_DIR"] = str(home / ".pi" / "agent")
            s = pi_session()
            self.path = s.write(home / ".pi" / "agent" / "sessions" / "--work--")

            def more_pi() -> bytes:
                n = len(s.entries)
                s.user("one more")
                return b"".join(line + b"\n" for line in s.entry_lines()[n:])

            self.more = more_pi
            return f"pi-{s.session_id}"
        if self.tool == "gemini":
            self.env["GEMINI_CLI_HOME"] = str(home)
            chat = GeminiSession()
            chat.user("Hello there")
            chat.gemini("Hi.")
            self.path = chat.write(home / ".gemini")

            def more_gemini() -> bytes:
                before = chat.data()
                chat.user("One more")
                return chat.data()[len(before) :]

            self.more = more_gemini
            return f"gemini-{GEMINI_SID}"
        self.env["XDG_DATA_HOME"] = str(home / "data")
        self.db = db = OpenCodeDb(home / "data" / "opencode" / "opencode.db")
        sid = db.session("Live one")
        db.exchange(sid, "First", "One.")
        self.sid = sid
        return source_session_id("opencode", sid)

    def grow(self) -> None:
        if self.db is not None:
            self.db.exchange(self.sid, "Second", "Two.")  # into the WAL only
            return
        added = self.more()
        assert added.endswith(b"\n")
        append(self.path, added)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


def _grown(t: Transcript, step: Callable[[], Any]) -> bytes:
    before = t.encode()
    step()
    return t.encode()[len(before) :]


class Watch:
    """A host watching the agents' folders, its client, and a wait on the catalogue."""

    def __init__(self, host: Any, client: Any, tools: list[str]) -> None:
        self.host, self.client, self.tools = host, client, tools
        self.changed = asyncio.Event()

    async def until(self, check: Callable[[], bool]) -> None:
        """Until `check()` holds, woken by each notification (bounded: `WITHIN` s)."""
        async with asyncio.timeout(WITHIN):
            while not check():
                self.changed.clear()
                await self.changed.wait()

    def events(self, sid: str) -> int:
        return int(self.client.catalogue[sid]["events"])


@contextlib.asynccontextmanager
async def watching(
    tmp_path: Path,
    tools: list[str],
    *,
    interval: float = HOUR,
    inotify: bool = True,
    kind: str | None = None,
) -> AsyncIterator[Watch]:
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.interval = interval  # an hour: a poll would come after the test's end
    host.sources.use_inotify = inotify
    client = await Client.in_process(host)
    try:
        watch = Watch(host, client, tools)
        await client.subscribe(lambda note: watch.changed.set())
        listed = await client.watch_sources(tools)
        assert listed["watching"] == tools
        assert host.sources.kind == (kind or ("inotify" if inotify else "poll"))
        yield watch
        await client.watch_sources([])
        assert host.sources.kind == "poll"
    finally:
        await client.close()
        await host.close()


def started(tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Agent, str]:
    agent = Agent(tool, tmp_path / "home")
    sid = agent.start()
    for var, value in agent.env.items():
        monkeypatch.setenv(var, value)
    return agent, sid


@pytest.mark.asyncio
@pytest.mark.parametrize("tool", ["claude", "codex", "pi", "gemini", "opencode"])
async def test_a_line_the_tool_appends_is_heard_without_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    agent, sid = started(tool, tmp_path, monkeypatch)
    try:
        async with watching(tmp_path, [tool]) as w:
            await w.until(lambda: sid in w.client.catalogue)
            before, passes = w.events(sid), w.host.sources.passes
            agent.grow()
            await w.until(lambda: w.events(sid) > before)
            # heard, not polled: the passes since are the ones the kernel's reports woke
            assert w.host.sources.passes > passes
    finally:
        agent.close()


@pytest.mark.asyncio
async def test_a_folder_made_after_the_watch_began_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's projects folder does not exist yet when the watch begins (a first
    run of the tool): the session it then writes, in folders made on the way, is heard."""
    config = tmp_path / "home" / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    async with watching(tmp_path, ["claude"]) as w:
        t = Transcript(CLAUDE_SID)
        t.exchange("first question", "first answer")
        path = project_file(config, t)
        path.parent.mkdir(parents=True)  # .claude, projects and the project at once
        t.write(path)
        await w.until(lambda: f"claude-{CLAUDE_SID}" in w.client.catalogue)


@pytest.mark.asyncio
async def test_without_the_kernels_notifications_the_folders_are_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where inotify cannot be had, a pass every `interval` seconds still finds the line."""
    agent, sid = started("codex", tmp_path, monkeypatch)
    async with watching(tmp_path, ["codex"], interval=0.05, inotify=False) as w:
        assert sid in w.client.catalogue  # the first pass ran before watch_sources returned
        before = w.events(sid)
        agent.grow()
        os.utime(agent.path, None)
        await w.until(lambda: w.events(sid) > before)


@pytest.mark.asyncio
async def test_a_tree_past_the_watch_limit_is_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More folders than may be watched (the system's limit, here one folder): the
    watcher says so by polling, and still finds the line."""
    from forkwise.core import inotify

    monkeypatch.setattr(inotify, "MOST_FOLDERS", 1)
    agent, sid = started("codex", tmp_path, monkeypatch)  # sessions/2025/09/01: 4 folders
    async with watching(tmp_path, ["codex"], interval=0.05, kind="poll") as w:
        before = w.events(sid)
        agent.grow()
        os.utime(agent.path, None)
        await w.until(lambda: w.events(sid) > before)


def writing_claude(config: Path) -> tuple[Path, str]:
    """A Claude Code session whose last prompt is being answered (its tool call's result
    is not in yet: the turn is open, Claude Code is writing it); its file and id."""
    t = Transcript(CLAUDE_SID)
    t.exchange("What does the build do?", "It compiles and runs the tests.")
    t.user("Now run the slow tests, please")
    t.assistant([{"type": "tool_use", "id": "toolu_01slow", "name": "Bash",
                  "input": {"command": "pytest -m slow"}}], stop="tool_use")
    return t.write(project_file(config, t)), f"claude-{CLAUDE_SID}"


@pytest.mark.asyncio
@pytest.mark.parametrize("inotify", [True, False])
async def test_an_agents_open_turn_ends_interrupted_when_its_file_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool
) -> None:
    """Claude Code deletes a session file whose last turn it was writing: the turn will
    never end there, so its row stops showing it running (`interrupted`), as the
    watcher hears of it and in every listing after; the copy is kept and nothing is
    written into it."""
    config = tmp_path / "home" / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    path, sid = writing_claude(config)
    interval = HOUR if inotify else 0.05
    async with watching(tmp_path, ["claude"], interval=interval, inotify=inotify) as w:
        assert w.client.catalogue[sid]["running"]  # the agent's turn, still being written
        listed = {r["id"]: r for r in await w.client.list_sessions()}
        assert listed[sid]["running"]
        assert not listed[sid].get("interrupted")
        events = w.events(sid)
        path.unlink()
        await w.until(lambda: not w.client.catalogue[sid]["running"])
        assert w.client.catalogue[sid]["interrupted"] is True
        listed = {r["id"]: r for r in await w.client.list_sessions()}
        assert (listed[sid]["running"], listed[sid].get("interrupted")) == (False, True)
        assert w.events(sid) == events  # the copy is as it was
        logged = await w.client.events(sid)
        assert logged[-1]["type"] != "turn/end"
