"""The typed fields of the fold's entries and of the client's usage values: what the GUI
reads instead of `data.get("…")`, checked against what the fold and the host produce."""

from __future__ import annotations

from typing import Any

from forkwise.core.client.reports import row_usage, usage_part, usage_report
from forkwise.core.reading.entries import APPROVAL, FORK, TOOL, TURN_END, build

TS = "2026-01-01T00:00:00Z"


def ev(seq: int, etype: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "type": etype, "ts": TS, **fields}


def test_a_tool_call_and_its_approval_read_as_typed_fields() -> None:
    events = [
        ev(1, "turn/start", turn="t"),
        ev(2, "message", turn="t", id="a1", role="assistant",
           parts=[{"type": "tool_call", "id": "c1", "name": "Task",
                   "args": {"prompt": "count the files"}}]),
        ev(3, "approval/request", turn="t", approval="p1", call="c1", tool="Task"),
    ]
    fold = build(events)
    tool = next(e for e in fold.entries if e.kind == TOOL)
    approval = next(e for e in fold.entries if e.kind == APPROVAL)
    assert (tool.tool_name, tool.task_prompt, tool.has_result) == ("Task", "count the files", False)
    assert approval.args == {"prompt": "count the files"}  # its call's arguments
    assert (approval.approval_id, approval.approval_tool) == ("p1", "Task")
    assert approval.waiting
    assert not tool.waiting  # only an approval waits
    fold.feed([ev(4, "approval/resolve", turn="t", approval="p1", decision="approved"),
               ev(5, "tool/result", turn="t", call="c1", output="3 files", error=True),
               ev(6, "turn/end", turn="t", status="failed", error="no provider for x")])
    assert (approval.decision, approval.waiting) == ("approved", False)
    assert (tool.result, tool.has_result, tool.failed) == ("3 files", True, True)
    end = next(e for e in fold.entries if e.kind == TURN_END)
    assert end.turn_error == "no provider for x"


def test_a_fork_record_reads_as_one_typed_value() -> None:
    fold = build([ev(1, "history/fork", source="s0", boundary=4, anchorMessage="user:q:1",
                     includeMessage=False, relation="subagent")])
    fork = fold.entries[0]
    assert fork.kind == FORK
    record = fork.fork
    assert (record.source, record.boundary, record.anchor_message) == ("s0", 4, "user:q:1")
    assert record.before
    assert record.relation == "subagent"
    imported = build([ev(1, "history/fork", source="s0", boundary=None)]).entries[0].fork
    assert (imported.boundary, imported.anchor_message, imported.before) == (None, None, False)


def test_usage_values_are_complete_whatever_arrived() -> None:
    assert usage_part(None) == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                "reasoning": 0, "cost": None}
    part = usage_part({"input": 5, "output": 2, "cost": 1, "reasoning": True})
    assert (part["input"], part["output"], part["reasoning"], part["cost"]) == (5, 2, 0, 1.0)
    assert row_usage({"own": {"input": 3}}) == {"own": usage_part({"input": 3})}
    assert row_usage({"cost": 1}) is None
    report = usage_report({"own": {"output": 7}, "byModel": {"m": {"input": 1}}})
    assert report["own"]["output"] == 7
    assert report["shared"] == usage_part(None)
    assert report["byModel"]["m"]["input"] == 1
