"""Gemini CLI and OpenCode through the verbs: a fork continued here, exported to the tool
and read back beneath the session it continues; both tools' folders watched live (an
OpenCode database followed through its WAL)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from gemini_fixtures import SID, GeminiSession, coding_session, settled
from opencode_fixtures import OpenCodeDb
from polling import until
from test_opencode_writer import opencode_import

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import source_session_id


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def rows(store: Path) -> dict[str, Any]:
    code, listed = run_json("sessions", "list", "--store", str(store))
    assert code == 0
    return {r["id"]: r for r in listed}


def fork_and_prompt(store: Path, parent: str) -> None:
    code, made = run_json("sessions", "fork", parent, "--child", "mine", "--store", str(store))
    assert code == 0, made
    code, turn = run_json("sessions", "prompt", "mine", "go on from here", "--store", str(store))
    assert (code, turn["status"]) == (0, "completed")


def test_a_gemini_fork_continued_here_goes_back_to_gemini_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    source = settled(coding_session().write(home / ".gemini"))
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "gemini", "--store", str(store))
    assert code == 0, report
    fork_and_prompt(store, f"gemini-{SID}")
    code, sent = run_json("sessions", "export", "mine", "--to", "gemini", "--store", str(store))
    assert code == 0, sent
    path = Path(sent["path"])
    assert path.parent == source.parent  # the same project's chats: `gemini --resume` lists it
    assert sent["resume"] == f"gemini --resume {sent['id']}"
    written = path.read_bytes().splitlines()
    shared = set(source.read_bytes().splitlines())
    assert sum(line in shared for line in written[1:]) == 5  # the two turns it shares
    assert b"go on from here" in written[-2]
    # read back (as the app's watcher would): beneath the fork it continues
    settled(path)
    code, again = run_json("sessions", "import", "--from", "gemini", "--store", str(store))
    assert code == 0, again
    back = source_session_id("gemini", sent["id"])
    assert again["imported"] == [back]
    listed = rows(store)
    assert (listed[back]["parentSession"], listed[back]["relation"]) == ("mine", "continued")


def test_an_opencode_fork_continued_here_goes_back_to_opencode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    db = OpenCodeDb(tmp_path / "data" / "opencode" / "opencode.db")
    try:
        sid = db.session("Haiku work")
        db.exchange(sid, "Write about the sea", "Waves fold into foam.")
        store = tmp_path / "store"
        code, report = run_json("sessions", "import", "--from", "opencode", "--store", str(store))
        assert code == 0, report
        fork_and_prompt(store, source_session_id("opencode", sid))
        code, sent = run_json("sessions", "export", "mine", "--to", "opencode", "--store", str(store))
        assert code == 0, sent
        path = Path(sent["path"])
        assert sent["resume"] == f"opencode import {path} && opencode -s {sent['id']}"
        exported = orjson.loads(path.read_bytes())
        texts = [p.get("text") for m in exported["messages"] for p in m["parts"]]
        assert "Write about the sea" in texts
        assert "go on from here" in texts
        opencode_import(db, exported)  # what `opencode import` does
        code, again = run_json("sessions", "import", "--from", "opencode", "--store", str(store))
        assert code == 0, again
        back = source_session_id("opencode", sent["id"])
        assert again["imported"] == [back]
        listed = rows(store)
        assert (listed[back]["parentSession"], listed[back]["relation"]) == ("mine", "continued")
    finally:
        db.close()


@pytest.mark.asyncio
async def test_watched_gemini_and_opencode_folders_bring_sessions_in_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    gemini_home = tmp_path / "g"
    data = tmp_path / "data"
    (gemini_home / ".gemini" / "tmp").mkdir(parents=True)
    db = OpenCodeDb(data / "opencode" / "opencode.db")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.interval = 0.05
    client = await Client.in_process(host)

    try:
        listed = await client.watch_sources(["gemini", "opencode"])
        assert sorted(listed["watching"]) == ["gemini", "opencode"]
        found = {s["tool"]: s["found"] for s in listed["sources"]}
        assert found["gemini"]
        assert found["opencode"]
        chat = GeminiSession()
        chat.user("Hello there")
        chat.gemini("Hi.")
        chat.write(gemini_home / ".gemini")
        sid = db.session("Live one")
        db.exchange(sid, "First", "One.")
        g_id, o_id = f"gemini-{SID}", source_session_id("opencode", sid)
        await until(lambda: g_id in client.catalogue and o_id in client.catalogue)
        g_before = client.catalogue[g_id]["events"]
        o_before = client.catalogue[o_id]["events"]
        chat.user("One more")
        chat.gemini("More.")
        chat.write(gemini_home / ".gemini")
        db.exchange(sid, "Second", "Two.")  # into the WAL only
        await until(
            lambda: client.catalogue[g_id]["events"] > g_before
            and client.catalogue[o_id]["events"] > o_before
        )
        await client.watch_sources([])
    finally:
        await client.close()
        await host.close()
        db.close()
