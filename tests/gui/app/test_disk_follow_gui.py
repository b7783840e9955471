"""Issue 18, item 10, as a person sees it: with the app open, another program appends a
turn to the open session, adds a session and deletes one; the transcript and the tree
follow within moments, without a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from gui_harness import open_app, until

pytestmark = pytest.mark.gui

TS = "2026-01-01T00:00:01Z"


def outside_turn(first_seq: int) -> bytes:
    turn = "turn:outside"
    records = [
        {"type": "turn/start", "turn": turn},
        {"type": "message", "turn": turn, "id": "user:outside:1", "role": "user",
         "parts": [{"type": "text", "text": "written by another program"}]},
        {"type": "message", "turn": turn, "id": "assistant:outside:1", "role": "assistant",
         "parts": [{"type": "text", "text": "and answered there"}]},
        {"type": "turn/end", "turn": turn, "status": "completed"},
    ]  # fmt: skip
    return b"".join(
        orjson.dumps({"seq": first_seq + n, "ts": TS, **r}) + b"\n" for n, r in enumerate(records)
    )


def test_the_app_follows_the_disk(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            await app.host.follow_disk(poll=0.2)
            tree = app.controller.tree
            plan = app.sid("Plan the 2.5 release")
            await app.open(plan)
            path = app.store_dir / "sessions" / f"{plan}.jsonl"
            last = len(app.log(plan))
            with open(path, "ab") as fh:
                fh.write(outside_turn(last))
            await until(lambda: app.rows("user", "written by another program"),
                        what="the outside turn in the open transcript")  # fmt: skip
            assert app.rows("assistant", "and answered there")
            header = {"type": "session", "version": 1, "id": "from-outside", "created": TS,
                      "cwd": "/tmp", "parentSession": None, "seedLength": 0, "meta": {}}  # fmt: skip
            title = {"seq": 1, "type": "session/title", "ts": TS, "title": "Made elsewhere"}
            (app.store_dir / "sessions" / "from-outside.jsonl").write_bytes(
                orjson.dumps(header) + b"\n" + orjson.dumps(title) + b"\n"
            )
            await until(lambda: "from-outside" in tree.session_ids(), what="the new row")
            assert (tree.summary("from-outside") or {}).get("title") == "Made elsewhere"
            (app.store_dir / "sessions" / "from-outside.jsonl").unlink()
            await until(lambda: "from-outside" not in tree.session_ids(), what="the row gone")
            assert app.notifier.errors() == []

    aloop(scenario())
