"""The agents' folders followed with the kernel's notifications: a line a tool appends to
its session (a row OpenCode writes into its database's WAL) reaches the store's catalogue
without any pass on a clock — the watcher's poll is set to an hour, and the test waits on
the catalogue's own notification."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
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


@pytest.mark.asyncio
@pytest.mark.parametrize("tool", ["claude", "codex", "pi", "gemini", "opencode"])
async def test_a_line_the_tool_appends_is_heard_without_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    agent = Agent(tool, tmp_path / "home")
    sid = agent.start()
    for var, value in agent.env.items():
        monkeypatch.setenv(var, value)
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.interval = HOUR  # a poll would come after the test's end
    client = await Client.in_process(host)
    try:
        changed = asyncio.Event()
        await client.subscribe(lambda note: changed.set())

        async def until(check: Callable[[], bool]) -> None:
            async with asyncio.timeout(WITHIN):
                while not check():
                    changed.clear()
                    await changed.wait()

        listed = await client.watch_sources([tool])
        assert listed["watching"] == [tool]
        assert host.sources.kind == "inotify"
        await until(lambda: sid in client.catalogue)
        before = client.catalogue[sid]["events"]
        passes = host.sources.passes
        agent.grow()
        await until(lambda: client.catalogue[sid]["events"] > before)
        # heard, not polled: the passes since are the ones the kernel's reports woke
        assert host.sources.passes > passes
        await client.watch_sources([])
        assert host.sources.kind == "poll"
    finally:
        await client.close()
        await host.close()
        agent.close()


@pytest.mark.asyncio
async def test_a_folder_made_after_the_watch_began_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's projects folder does not exist yet when the watch begins (a first
    run of the tool): the session it then writes, in folders made on the way, is heard."""
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    config = tmp_path / "home" / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.interval = HOUR
    client = await Client.in_process(host)
    try:
        changed = asyncio.Event()
        await client.subscribe(lambda note: changed.set())
        await client.watch_sources(["claude"])
        assert host.sources.kind == "inotify"
        t = Transcript(CLAUDE_SID)
        t.exchange("first question", "first answer")
        path = project_file(config, t)
        path.parent.mkdir(parents=True)  # .claude, projects and the project at once
        t.write(path)
        sid = f"claude-{CLAUDE_SID}"
        async with asyncio.timeout(WITHIN):
            while sid not in client.catalogue:
                changed.clear()
                await changed.wait()
        assert os.path.exists(path)
    finally:
        await client.close()
        await host.close()


@pytest.mark.asyncio
async def test_without_the_kernels_notifications_the_folders_are_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where inotify cannot be had, a pass every `interval` seconds still finds the line."""
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    agent = Agent("codex", tmp_path / "home")
    sid = agent.start()
    for var, value in agent.env.items():
        monkeypatch.setenv(var, value)
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.use_inotify = False
    host.sources.interval = 0.05
    client = await Client.in_process(host)
    try:
        changed = asyncio.Event()
        await client.subscribe(lambda note: changed.set())
        await client.watch_sources(["codex"])
        assert host.sources.kind == "poll"
        assert sid in client.catalogue  # the first pass ran before watch_sources returned
        before = client.catalogue[sid]["events"]
        agent.grow()
        os.utime(agent.path, None)
        async with asyncio.timeout(WITHIN):
            while client.catalogue[sid]["events"] <= before:
                changed.clear()
                await changed.wait()
    finally:
        await client.close()
        await host.close()
