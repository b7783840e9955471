"""Titles of imported sessions as the list shows them (`sessions list`), from real-format
files on disk through the CLI: what the agent itself shows, and a file Forkwise exported
read back under its own name and date."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
from codex_fixtures import Rollout, basic, thread_id

from forkwise.core.cli import main as cli


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def rows(store: Path) -> dict[str, dict[str, Any]]:
    code, listed = run_json("sessions", "list", "--store", str(store))
    assert code == 0, listed
    return {r["id"]: r for r in listed}


def test_a_codex_subagent_prompted_only_by_user_message_events_is_titled_by_its_task(
    tmp_path: Path,
) -> None:
    """A thread_spawn child whose task arrives as an `event_msg` `user_message` only (no
    user response item): its title is that message, as Codex shows it, not its id."""
    home, store = tmp_path / "codex", tmp_path / "store"
    parent = basic(50)
    parent.write(home)
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": thread_id(50), "depth": 1}}}
    child = Rollout(thread_id(51)).meta(source=spawn, agent_nickname="Ada")
    child.event("task_started", turn_id="t-1", model_context_window=272000)
    child.context()
    child.event("user_message", message="Count the test files under tests/", images=[])
    child.answer("There are 12 test files.", item_id="msg_sub_1")
    child.event("task_complete", turn_id="t-1", last_agent_message="There are 12 test files.")
    child.write(home)
    code, report = run_json("sessions", "import", "--from", "codex", str(home),
                            "--store", str(store))  # fmt: skip
    assert code == 0, report
    listed = rows(store)
    sub = listed[f"codex-{thread_id(51)}"]
    assert sub["parentSession"] == f"codex-{thread_id(50)}"
    assert sub["title"] == "Count the test files under tests/"


def test_a_continue_in_read_back_is_named_and_dated_as_such(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A fork continued in Codex (exported), then read back by an import of the Codex
    home: it lists beneath the fork, created when it was exported (not at its first
    copied line, in 2025), and titled as continuing that fork, not with its exact title."""
    from forkwise.core.log.events import now_ts

    home, store = tmp_path / "codex", tmp_path / "store"
    monkeypatch.setenv("CODEX_HOME", str(home))
    basic(53).write(home)
    run_json("sessions", "import", "--from", "codex", str(home), "--store", str(store))
    parent = f"codex-{thread_id(53)}"
    code, made = run_json("sessions", "fork", parent, "--child", "mine", "--store", str(store))
    assert code == 0, made
    code, turn = run_json("sessions", "prompt", "mine", "go on from here", "--store", str(store))
    assert (code, turn["status"]) == (0, "completed")
    before = now_ts()
    code, sent = run_json("sessions", "export", "mine", "--to", "codex", "--store", str(store))
    assert code == 0, sent
    code, report = run_json("sessions", "import", "--from", "codex", str(home),
                            "--store", str(store))  # fmt: skip
    assert code == 0, report
    listed = rows(store)
    (back,) = [r for r in listed.values() if r["relation"] == "continued"]
    assert back["parentSession"] == "mine"
    fork_title = listed["mine"]["title"]
    assert back["title"] == f"{fork_title} — continued in Codex"
    assert back["created"] >= before
    assert back["created"].startswith(before[:4])
