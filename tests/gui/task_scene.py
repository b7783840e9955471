"""A Claude Code session whose answer started a Task (a subagent), and how a test opens its
call."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gui_harness import until

SID = "7e3c1a90-1111-4a3b-8c2d-aaaaaaaaaaaa"
PROMPT = "Search the repository for reconcile( callers"


def claude_line(n: int, kind: str, message: dict[str, Any], parent: int | None,
                **extra: Any) -> dict[str, Any]:
    """Line `n` of the scene's Claude Code file (`parent`: the line it answers)."""
    return {"parentUuid": None if parent is None else f"00000000-0000-4000-8000-{parent:012d}",
            "isSidechain": False, "userType": "external", "cwd": "/home/dev/pay",
            "sessionId": SID, "version": "2.0.77", "gitBranch": "main", "type": kind,
            "message": message, "uuid": f"00000000-0000-4000-8000-{n:012d}",
            "timestamp": f"2026-01-05T09:00:{n:02d}.000Z", **extra}


def claude_task_session(root: Path) -> Path:
    """A Claude Code session whose second turn hands a search to a subagent (a Task
    call), and the subagent's own transcript under `<session>/subagents/`."""
    import orjson

    folder = root / "projects" / "-home-dev-pay"
    call = "toolu_01task000000000001"

    def reply(n: int, parent: int, block: dict[str, Any], stop: str) -> dict[str, Any]:
        return claude_line(n, "assistant", {
            "model": "claude-sonnet-4-5", "id": f"msg_{n}", "type": "message",
            "role": "assistant", "content": [block], "stop_reason": stop}, parent)

    lines = [
        claude_line(1, "user", {"role": "user", "content": "find every caller of reconcile()"},
                     None),
        reply(2, 1, {"type": "tool_use", "id": call, "name": "Task",
                     "input": {"description": "Find callers", "prompt": PROMPT,
                               "subagent_type": "general-purpose"}}, "tool_use"),
        claude_line(3, "user", {"role": "user", "content": [
            {"tool_use_id": call, "type": "tool_result",
             "content": [{"type": "text", "text": "3 callers"}]}]}, 2,
            toolUseResult={"status": "completed"}),
        reply(4, 3, {"type": "text", "text": "There are 3 callers."}, "end_turn"),
    ]
    path = folder / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    agent = [
        {**claude_line(11, "user", {"role": "user", "content": PROMPT}, None),
         "isSidechain": True, "agentId": "a1b2c3d4"},
        {**reply(12, 11, {"type": "text", "text": "billing.py, ledger.py, cron.py"},
                 "end_turn"), "isSidechain": True, "agentId": "a1b2c3d4"},
    ]
    sub = folder / SID / "subagents" / "agent-a1b2c3d4.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in agent))
    for p in (path, sub):
        os.utime(p, (1_700_000_000, 1_700_000_000))
    return root / "projects"


async def open_task_call(app: Any, projects: Path) -> tuple[str, str, int]:
    """Import `claude_task_session`'s projects into the open app and open the parent:
    (parent id, subagent id, the transcript row of the Task call)."""
    report = await app.client.import_files([str(projects)], "claude")
    assert not report["failed"], report["failed"]
    parent = f"claude-{SID}"
    tree = app.controller.tree
    await until(lambda: len(tree.children_of(parent)) == 1, what="the subagent")
    (child,) = tree.children_of(parent)
    await app.open(parent)
    (task,) = [i for i, e in enumerate(app.entries) if e.kind == "tool"]
    return parent, child, task
