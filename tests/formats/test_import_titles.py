"""Titles of imported sessions as the list shows them (`sessions list`), from real-format
files on disk through the CLI: what the agent itself shows, a fork named after its
source, and a file Forkwise exported read back under its own name and date."""

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


def test_forks_of_a_session_titled_by_its_header_are_named_after_it(tmp_path: Path) -> None:
    """A Codex thread named in `session_index.jsonl` is titled by its header alone (no
    title event). The listing names its forks as the app's list does, "<title> — fork N",
    each with its own number (they listed as the first question both copied, alike); a
    fork made before anything was asked is not one of its source's titles."""
    from codex_fixtures import name_thread

    home, store = tmp_path / "codex", tmp_path / "store"
    basic(52).write(home)
    name_thread(home, thread_id(52), "Parser work")
    code, _ = run_json("sessions", "import", "--from", "codex", str(home), "--store", str(store))
    assert code == 0
    source = f"codex-{thread_id(52)}"
    for child in ("one", "two"):
        code, made = run_json("sessions", "fork", source, "--child", child, "--store", str(store))
        assert code == 0, made
    code, made = run_json("sessions", "fork", source, "--boundary", "0", "--child", "blank",
                          "--store", str(store))  # fmt: skip
    assert code == 0, made
    listed = rows(store)
    assert listed[source]["title"] == "Parser work"
    assert listed["one"]["title"] == "Parser work — fork 1"
    assert listed["two"]["title"] == "Parser work — fork 2"
    assert "Parser work" not in listed["blank"]["title"]
    out, err = io.StringIO(), io.StringIO()  # the table a person reads says the same
    assert cli.main(["sessions", "list", "--store", str(store)], out=out, err=err) == 0
    assert "Parser work — fork 2" in out.getvalue()


def test_a_continue_in_read_back_with_nothing_new_is_dated_when_it_was_made(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A fork sent to Codex straight away (no turn of its own yet) and read back: every
    line of the file is a copied one, from 2025. Its last activity is not before it was
    made: it lists as today's, not under its source's date."""
    from forkwise.core.log.events import now_ts

    home, store = tmp_path / "codex", tmp_path / "store"
    monkeypatch.setenv("CODEX_HOME", str(home))
    basic(54).write(home)
    run_json("sessions", "import", "--from", "codex", str(home), "--store", str(store))
    parent = f"codex-{thread_id(54)}"
    code, made = run_json("sessions", "fork", parent, "--child", "mine", "--store", str(store))
    assert code == 0, made
    before = now_ts()
    code, sent = run_json("sessions", "export", "mine", "--to", "codex", "--store", str(store))
    assert code == 0, sent
    code, report = run_json("sessions", "import", "--from", "codex", str(home),
                            "--store", str(store))  # fmt: skip
    assert code == 0, report
    listed = rows(store)
    (back,) = [r for r in listed.values() if r["relation"] == "continued"]
    assert back["created"] >= before
    assert back["updated"] >= back["created"]
    assert listed[parent]["updated"] < before  # the source's own lines keep their dates


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
