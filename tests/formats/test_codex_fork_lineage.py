"""Forks the real Codex (`codex app-server` `thread/fork`, 0.171) makes of a rollout an
older Codex wrote: the fork file repeats the parent's history with new item ids and
without the parent's tool notices. Imported, each fork shares that history with its
parent (stored once), as many turns as Codex itself gives the fork, and carries on with
the parent's model.

Runs codex offline against a fake Responses endpoint on 127.0.0.1 (see
codex_app_server.py); it fails, not skips, when codex cannot be installed or started.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
from codex_app_server import AppServer, FakeResponses, codex_binary, write_config
from codex_fixtures import basic

from forkwise.core.cli import main as cli


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def test_forks_of_an_older_rollout_share_its_history_and_model(tmp_path: Path) -> None:
    home, store = tmp_path / "codex", tmp_path / "store"
    api = FakeResponses()
    try:
        write_config(home, api.port)
        old = basic(72)
        old.lines[0]["payload"]["cli_version"] = "0.104.0"
        old.write(home)
        server = AppServer(codex_binary(), home, tmp_path / "app-server.log")
        try:
            grown = server.request("thread/fork", {"threadId": old.tid})["thread"]["id"]
            bare = server.request("thread/fork", {"threadId": old.tid})["thread"]["id"]
            read = server.request("thread/read", {"threadId": bare, "includeTurns": True})
            codex_turns = len(read["thread"]["turns"])
            server.turn(grown, "in the fork")
        finally:
            server.close()
    finally:
        api.close()
    # what the fork file holds: the parent's items again, under ids of its own
    fork_file = next(home.rglob(f"rollout-*-{bare}.jsonl"))
    parent_file = next(home.rglob(f"rollout-*-{old.tid}.jsonl"))
    copied = [orjson.loads(x) for x in fork_file.read_bytes().splitlines()]
    assert [x["payload"]["id"] for x in copied if x["type"] == "session_meta"] == [bare, old.tid]
    assert fork_file.read_bytes().count(b'"type":"response_item"') == parent_file.read_bytes(
    ).count(b'"type":"response_item"')

    code, report = run_json("sessions", "import", "--from", "codex", str(home),
                            "--store", str(store))  # fmt: skip
    assert (code, report["failed"]) == (0, []), report
    code, listed = run_json("sessions", "list", "--store", str(store))
    rows = {r["id"]: r for r in listed}
    parent = rows[f"codex-{old.tid}"]
    for fork in (f"codex-{grown}", f"codex-{bare}"):
        assert rows[fork]["parentSession"] == parent["id"]
        # the whole history the parent has (it ends at a turn end) is the fork's seed
        assert rows[fork]["seedLength"] == parent["events"]
    code, shown = run_json("sessions", "show", f"codex-{bare}", "--store", str(store))
    seed = shown["events"][: rows[f"codex-{bare}"]["seedLength"]]
    assert sum(e["type"] == "turn/start" for e in seed) == codex_turns == 2
    # nothing of its own but the fork mark: it answers with the parent's model
    assert rows[f"codex-{bare}"]["model"] == parent["model"] == "gpt-5-codex"
    own = shown["events"][len(seed):]
    assert own[0]["type"] == "history/fork"
    assert not [e for e in own if e["type"] in ("message", "turn/start")]
    code, shown = run_json("sessions", "show", f"codex-{grown}", "--store", str(store))
    own = shown["events"][rows[f"codex-{grown}"]["seedLength"]:]
    assert own[0]["type"] == "history/fork"
    prompts = [e["parts"][0]["text"] for e in own if e["type"] == "message" and e["role"] == "user"]
    assert prompts == ["in the fork"]
