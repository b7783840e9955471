"""An imported Claude Code session rewound after its first answer, whose left-behind branch
ran the tests, thought and started a subagent; how a test imports it and finds the
branch."""

from __future__ import annotations

import os
from pathlib import Path

import claude_fixtures as cf
from gui_harness import App, until

CWD = "/home/ada/work/forkwise app"
SID = "7c1e2f3a-1111-4a6a-9e7d-0a1b2c3d4e5f"
AGENT = "cafe01"
PROMPT = "Search conftest.py files for a fixture that opens a socket and never closes it"
THOUGHT = "The fixture that opens a socket may never close it; a subagent should search."
LONG_OUTPUT = "\n".join(f"tests/test_{i:03d}.py::test_case PASSED" for i in range(40))


def claude_session(root: Path) -> Path:
    """A Claude Code project: a session rewound after its first answer, whose left-behind
    branch ran the tests (a long output), thought, and started a subagent."""
    t = cf.Transcript(SID, cwd=CWD)
    t.exchange("Why does the test suite hang on CI?", "Let me look at the CI logs.")
    fork_at = t.last
    t.tool_turn("run the tests", "pytest -q", LONG_OUTPUT, "They pass here.")
    t.user("delegate the search for the hanging fixture")
    task = t.assistant(
        [{"type": "thinking", "thinking": THOUGHT, "signature": "E" * 40},
         {"type": "tool_use", "id": "toolu_task1", "name": "Task",
          "input": {"description": "Find the fixture", "prompt": PROMPT}}],
        stop="tool_use")
    t.tool_result("toolu_task1", [{"type": "text", "text": "tests/conftest.py:42"}], task[-1],
                  result={"agentId": AGENT})
    t.assistant([{"type": "text", "text": "The server fixture never closes its socket."}])
    t.last = fork_at  # the rewind: a new prompt under the first answer
    t.exchange("Actually, just check the timeout settings", "The CI timeout is 10 minutes.")
    t.custom_title("CI hang hunt")
    path = cf.write_old(t, root)
    agent = cf.Transcript(SID, sidechain=True, agent_id=AGENT, cwd=CWD)
    agent.user(PROMPT, parent=None)
    agent.tool_turn("grep", "grep -rn socket tests/", "tests/conftest.py:42", "Line 42.")
    sub = agent.write(path.parent / SID / "subagents" / f"agent-{AGENT}.jsonl")
    os.utime(sub, (1_700_000_000, 1_700_000_000))
    return root


async def imported(app: App, *paths: Path) -> None:
    report = await app.client.import_files([str(p) for p in paths])
    assert not report["failed"], report
    await until(lambda: any(s.startswith(("claude-", "pi-"))
                            for s in app.controller.tree.session_ids()), what="imported rows")
    await app.idle()


def rewound_branch(app: App) -> str:
    """The branch the rewind left behind (a fork of the main line)."""
    tree = app.controller.tree
    (branch,) = [s for s in tree.session_ids()
                 if (tree.summary(s) or {}).get("relation") == "fork"
                 and (tree.summary(s) or {}).get("parentSession") == f"claude-{SID}"]
    return branch
