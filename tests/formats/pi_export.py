"""Forkwise sessions to hand to the pi writer: imported ones, and forks with new turns."""

from __future__ import annotations

from typing import Any

from forkwise.core.formats.base import ExportInput, ImportedSession

NEW_TURN = "turn:f0f0f0f0"


def as_stored(events: list[dict[str, Any]], start: int = 1) -> list[dict[str, Any]]:
    return [{"seq": n, **e} for n, e in enumerate(events, start=start)]


def export_input(
    imported: ImportedSession, events: list[dict[str, Any]] | None = None
) -> ExportInput:
    return ExportInput(
        session_id=imported.id,
        cwd=imported.cwd,
        title=imported.title,
        created=imported.created,
        events=as_stored(imported.events) if events is None else events,
        sources={imported.source.id: imported.source},
    )


def last_turn_end(events: list[dict[str, Any]], before: int | None = None) -> int:
    """Number of events through the last turn/end (the fork boundary), optionally the last
    one before index `before`."""
    stop = len(events) if before is None else before
    return max(i + 1 for i, e in enumerate(events[:stop]) if e["type"] == "turn/end")


def forked_with_new_turns(imported: ImportedSession, boundary: int) -> list[dict[str, Any]]:
    """What a Forkwise fork of `imported` at `boundary` holds once a person has worked in
    it: the seed, history/fork, the model it answers with, one turn with a tool call, a
    title and an event pi has no entry for."""
    seed = as_stored(imported.events[:boundary])
    ts = "2026-02-01T09:00:00.000Z"
    added: list[dict[str, Any]] = [
        {"type": "history/fork", "ts": ts, "source": imported.id, "boundary": boundary},
        {
            "type": "model/select",
            "ts": ts,
            "provider": "openai",
            "model": "qwen3-coder",
            "reasoning": "high",
        },
        {"type": "turn/start", "ts": "2026-02-01T09:00:01.000Z", "turn": NEW_TURN},
        {
            "type": "message",
            "ts": "2026-02-01T09:00:01.000Z",
            "turn": NEW_TURN,
            "id": "user:try-again:0001",
            "role": "user",
            "parts": [{"type": "text", "text": "Try again, shorter"}],
        },
        {
            "type": "step/start",
            "ts": "2026-02-01T09:00:02.000Z",
            "turn": NEW_TURN,
            "step": "step:1",
        },
        {
            "type": "message",
            "ts": "2026-02-01T09:00:03.000Z",
            "turn": NEW_TURN,
            "id": "assistant:message:0002",
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "text": "Look at the file again."},
                {
                    "type": "tool_call",
                    "id": "call_fw_1",
                    "name": "read_file",
                    "args": {"path": "README.md"},
                },
            ],
        },
        {
            "type": "approval/request",
            "ts": "2026-02-01T09:00:03.000Z",
            "turn": NEW_TURN,
            "approval": "ap:1",
            "call": "call_fw_1",
            "tool": "read_file",
        },
        {
            "type": "approval/resolve",
            "ts": "2026-02-01T09:00:04.000Z",
            "turn": NEW_TURN,
            "approval": "ap:1",
            "decision": "approve",
        },
        {
            "type": "tool/result",
            "ts": "2026-02-01T09:00:05.000Z",
            "turn": NEW_TURN,
            "call": "call_fw_1",
            "tool": "read_file",
            "output": "# Demo",
        },
        {
            "type": "message",
            "ts": "2026-02-01T09:00:06.000Z",
            "turn": NEW_TURN,
            "id": "assistant:a-demo:0003",
            "role": "assistant",
            "parts": [{"type": "text", "text": "A demo."}],
        },
        {"type": "step/end", "ts": "2026-02-01T09:00:06.000Z", "turn": NEW_TURN, "step": "step:1"},
        {
            "type": "turn/end",
            "ts": "2026-02-01T09:00:06.000Z",
            "turn": NEW_TURN,
            "status": "completed",
        },
        {"type": "session/title", "ts": "2026-02-01T09:00:07.000Z", "title": "Shorter summary"},
        {"type": "plugin/forkwise/bookmark", "ts": "2026-02-01T09:00:08.000Z", "note": "good one"},
    ]
    return seed + as_stored(added, start=boundary + 1)
