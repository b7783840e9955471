"""A demo store: a few sessions that show what Forkwise does, built through the store.

Lineage (a fork and a fork of that fork), a subagent child, tool calls with results and
approvals, a `model/select`, and a turn left waiting on an approval (it stays open across
restarts until someone answers it). Used by `forkwise --demo` and by tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from forkwise.core.log.ids import new_message_id, new_token
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

Draft = dict[str, Any]

MODEL = {
    "type": "model/select",
    "provider": "offline",
    "model": "forkwise-offline",
    "label": "Offline demo model (built in, no network)",
    "offline": True,
}


class _Clock:
    """Timestamps a few minutes apart, ending about now, so activity columns differ."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, minutes: float = 1.0) -> str:
        self.now += timedelta(minutes=minutes)
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _turn(
    clock: _Clock,
    question: str,
    answer: str,
    *,
    reasoning: str = "",
    tool: tuple[str, dict[str, Any], Any] | None = None,
    close: bool = True,
) -> list[Draft]:
    """One turn: the question, optionally a tool call (approved, with its result), the answer.

    `close=False` stops at a pending approval for the tool call (an open turn)."""
    turn = new_token("turn")
    step = new_token("step")
    drafts: list[Draft] = [
        {"type": "turn/start", "turn": turn, "ts": clock.tick()},
        {"type": "message", "id": new_message_id("user", question), "role": "user",
         "turn": turn, "parts": [{"type": "text", "text": question}], "ts": clock.tick(0.2)},
        {"type": "step/start", "turn": turn, "step": step, "provider": "offline",
         "model": "forkwise-offline", "ts": clock.tick(0.1)},
    ]
    if tool is not None:
        name, args, output = tool
        call = new_token("call")
        approval = new_token("approval")
        parts: list[dict[str, Any]] = []
        if reasoning:
            parts.append({"type": "reasoning", "text": reasoning})
        parts += [{"type": "text", "text": f"Let me look: calling {name}."},
                  {"type": "tool_call", "id": call, "name": name, "args": args}]
        drafts += [
            {"type": "message", "id": new_message_id("assistant", f"calling {name}"),
             "role": "assistant", "turn": turn, "step": step, "parts": parts,
             "ts": clock.tick(0.3)},
            {"type": "approval/request", "turn": turn, "approval": approval, "call": call,
             "tool": name, "args": args, "ts": clock.tick(0.05)},
        ]
        if not close:
            return drafts
        drafts += [
            {"type": "approval/resolve", "turn": turn, "approval": approval, "call": call,
             "decision": "approved", "ts": clock.tick(0.5)},
            {"type": "tool/result", "turn": turn, "call": call, "tool": name, "output": output,
             "isError": False, "ts": clock.tick(0.05)},
            {"type": "step/end", "turn": turn, "step": step, "ts": clock.tick(0.05)},
        ]
        step = new_token("step")
        drafts.append({"type": "step/start", "turn": turn, "step": step, "provider": "offline",
                       "model": "forkwise-offline", "ts": clock.tick(0.05)})
        reasoning = ""
    parts = [{"type": "reasoning", "text": reasoning}] if reasoning else []
    parts.append({"type": "text", "text": answer})
    drafts += [
        {"type": "message", "id": new_message_id("assistant", answer), "role": "assistant",
         "turn": turn, "step": step, "parts": parts, "ts": clock.tick(0.4)},
        {"type": "step/end", "turn": turn, "step": step, "ts": clock.tick(0.05)},
        {"type": "turn/end", "turn": turn, "status": "completed", "ts": clock.tick(0.05)},
    ]
    return drafts


def _workspace(root: Path) -> str:
    ws = root / "demo-workspace"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    files = {
        "README.md": "# Release tooling\n\nScripts that cut and publish releases.\n",
        "CHANGELOG.md": "## 2.4.0\n- faster start-up\n- new export format\n"
                        "## 2.3.1\n- fix a crash when the cache is empty\n",
        "src/release.py": "def cut(version):\n    print('cutting', version)\n",
    }
    for name, text in files.items():
        path = ws / name
        if not path.exists():
            path.write_text(text, encoding="utf-8")
    return str(ws)


def build_demo_store(root: str | os.PathLike[str]) -> list[str]:
    """Fill `root` with the demo sessions (nothing is added if it has sessions already).
    Returns the ids of the sessions it created."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    store = SessionStore(JsonlBackend(root))
    try:
        if store.ids():
            return []
        return list(_build(store, root))
    finally:
        store.close()


def _build(store: SessionStore, root: Path) -> Iterator[str]:
    cwd = _workspace(root)
    clock = _Clock(datetime.now(UTC) - timedelta(hours=5))

    quick = store.create(meta={"title": "Quick question about tabs vs spaces"}, cwd=cwd)
    store.append(quick.id, [dict(MODEL, ts=clock.tick())])
    store.append(quick.id, _turn(
        clock, "Tabs or spaces for a new Python project?",
        "Spaces: PEP 8 asks for four per level, and every formatter (ruff, black) "
        "writes them. Configure your editor once and forget about it."))
    yield quick.id

    plan = store.create(meta={"title": "Plan the 2.5 release"}, cwd=cwd)
    store.append(plan.id, [dict(MODEL, ts=clock.tick())])
    store.append(plan.id, _turn(
        clock, "We want to ship 2.5 in three weeks. What should the plan look like?",
        "A three-week plan:\n1. Week 1 — freeze features, triage open bugs.\n"
        "2. Week 2 — release candidate, run the upgrade tests.\n"
        "3. Week 3 — fix blockers, write the notes, publish.",
        reasoning="Three weeks is short; front-load the freeze so the RC gets a full week."))
    store.append(plan.id, _turn(
        clock, "What changed since 2.3? Check the changelog.",
        "Since 2.3.1 the changelog lists faster start-up and a new export format. "
        "Both deserve a line in the release notes; the export format needs an upgrade note.",
        tool=("read_file", {"path": "CHANGELOG.md"},
              "## 2.4.0\n- faster start-up\n- new export format\n## 2.3.1\n"
              "- fix a crash when the cache is empty\n")))
    fork_point = store.get(plan.id).last_seq
    store.append(plan.id, _turn(
        clock, "Draft the announcement e-mail.",
        "Subject: Forkwise 2.5 is out\n\nHi all — 2.5 starts faster and exports to the new "
        "format. Upgrade notes are in the changelog. Thanks to everyone who tested the RC!"))
    yield plan.id

    # A fork at the end of the changelog turn: try a shorter schedule in the child.
    shorter = store.fork(plan.id, fork_point, meta={"title": "2.5 release — two-week schedule"},
                         follow=[dict(MODEL, ts=clock.tick())])
    store.append(shorter.id, _turn(
        clock, "Could we do it in two weeks instead?",
        "Two weeks works if the RC is cut on day 4: freeze on day 1, RC on day 4, "
        "fixes until day 10, publish on day 12. Risky, but doable.",
        reasoning="Compress the freeze and the RC; keep the fix window as long as possible."))
    yield shorter.id

    # A fork of the fork.
    tiny = store.fork(shorter.id, meta={"title": "Two weeks, skipping the RC"},
                      follow=[dict(MODEL, ts=clock.tick())])
    store.append(tiny.id, _turn(
        clock, "And if we skip the release candidate entirely?",
        "Then nobody outside the team runs 2.5 before it ships. I would not skip it; "
        "a one-day RC is still better than none."))
    yield tiny.id

    # A subagent the plan session started to scan the workspace.
    scout = store.fork(plan.id, 4 + 3, meta={"relation": "subagent",
                                             "title": "Subagent: list the release scripts"},
                       follow=[dict(MODEL, ts=clock.tick())])
    store.append(scout.id, _turn(
        clock, "List the scripts in the workspace that are part of the release.",
        "One script: src/release.py (cut(version) prints what it would cut).",
        tool=("list_dir", {"path": "src"}, [{"name": "release.py", "type": "file"}])))
    yield scout.id

    # A session whose turn waits on an approval: the turn stays open until answered.
    waiting = store.create(meta={"title": "Clean up the build folder"}, cwd=cwd)
    store.append(waiting.id, [dict(MODEL, ts=clock.tick())])
    store.append(waiting.id, _turn(
        clock, "What is in the workspace?",
        "README.md, CHANGELOG.md and a src/ folder with release.py.",
        tool=("list_dir", {"path": "."}, [{"name": "README.md"}, {"name": "CHANGELOG.md"},
                                          {"name": "src"}])))
    store.append(waiting.id, _turn(
        clock, "Read the README so we know what the project is.", "",
        tool=("read_file", {"path": "README.md"}, None), close=False))
    yield waiting.id
