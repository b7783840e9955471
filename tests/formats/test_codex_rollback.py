"""A Codex thread rolled back past a compaction: the real Codex (`codex app-server`, 0.171,
legacy history) writes two prompted turns and a `thread/compact/start` turn, whose summary
reply is a turn without a prompt. 0.171's app-server has no `thread/rollback`, so the
rollback line is appended as Codex's core persists it: an `event_msg` of type
`thread_rolled_back` with `num_turns` (codex-rs/protocol `ThreadRolledBackEvent`). Codex
then resumes the thread itself; its history (codex-rs/core `rollout_reconstruction.rs`:
segments bounded by `task_started`, a rollback skips segments until `num_turns` of them
holding a typed user message are gone) drops the second prompt with the compaction turn,
and the model never sees it again. Imported, the rolled-back child shares the thread up
to the end of the first turn only.

Runs codex offline against a fake Responses endpoint on 127.0.0.1 (see
codex_app_server.py); it fails, not skips, when codex cannot be installed or started.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
from codex_app_server import AppServer, FakeResponses, codex_binary, write_config

from forkwise.core.cli import main as cli

KEPT, DROPPED, AFTER = "keep this question", "drop this question", "asked after the rollback"


def run_json(*argv: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    assert code == 0, err.getvalue()
    return orjson.loads(out.getvalue())


def prompts(events: list[dict[str, Any]]) -> list[str]:
    return [e["parts"][0]["text"] for e in events if e["type"] == "message" and e["role"] == "user"]


def test_a_rollback_past_a_compaction_turn_shares_only_the_turns_codex_kept(
    tmp_path: Path,
) -> None:
    home, store = tmp_path / "codex", tmp_path / "store"
    api = FakeResponses()
    try:
        write_config(home, api.port)
        cwd = tmp_path / "proj"
        cwd.mkdir()
        server = AppServer(codex_binary(), home, tmp_path / "app-server.log")
        try:
            params = {"cwd": str(cwd), "historyMode": "legacy"}
            tid = server.request("thread/start", params)["thread"]["id"]
            server.turn(tid, KEPT)
            server.turn(tid, DROPPED)
            server.request("thread/compact/start", {"threadId": tid})
            server.turn_completed(tid)
        finally:
            server.close()
        rollout = next(home.rglob(f"rollout-*-{tid}.jsonl"))
        lines = [orjson.loads(x) for x in rollout.read_bytes().splitlines()]
        started = [i for i, x in enumerate(lines) if x["payload"].get("type") == "task_started"]
        compaction = lines[started[-1] :]
        assert any(x["type"] == "compacted" for x in compaction)
        # the compaction turn holds a reply and no prompt
        assert any(x["payload"].get("role") == "assistant" for x in compaction)
        assert not any(x["payload"].get("type") == "user_message" for x in compaction)
        stamp = lines[-1]["timestamp"]
        rolled = {"type": "thread_rolled_back", "num_turns": 1}
        with rollout.open("ab") as f:
            f.write(orjson.dumps({"timestamp": stamp, "type": "event_msg", "payload": rolled}))
            f.write(b"\n")
        server = AppServer(codex_binary(), home, tmp_path / "app-server.log")
        try:
            server.request("thread/resume", {"threadId": tid})
            asked = len(api.requests)
            server.turn(tid, AFTER)
        finally:
            server.close()
        sent = json.dumps(api.requests[asked:])
        assert KEPT in sent
        assert DROPPED not in sent  # Codex's own history lost the rolled-back prompt
    finally:
        api.close()

    report = run_json("sessions", "import", "--from", "codex", str(home), "--store", str(store))
    assert report["failed"] == []
    rows = {r["id"]: r for r in run_json("sessions", "list", "--store", str(store))}
    main_id = f"codex-{tid}"
    (child_id,) = [sid for sid, r in rows.items() if r["parentSession"] == main_id]
    main = run_json("sessions", "show", main_id, "--store", str(store))["events"]
    child = run_json("sessions", "show", child_id, "--store", str(store))["events"]
    # the child leaves the thread where the first turn ends (before: at the second's end)
    kept_end = next(e["seq"] for e in main if e["type"] == "turn/end")
    assert rows[child_id]["seedLength"] == kept_end
    assert child[kept_end]["type"] == "history/fork"
    assert prompts(main) == [KEPT, AFTER]
    assert prompts(child) == [KEPT, DROPPED]
