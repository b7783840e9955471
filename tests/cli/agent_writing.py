"""A Claude Code session its agent is still writing (its last turn open, a tool call's
result not in yet), and the real `forkwise` command run in a process of its own: for the
tests of what the host refuses to write into such a turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
import claude_fixtures as cf

SID = f"claude-{cf.SID}"


def forkwise(*argv: str) -> tuple[int, object]:
    """`forkwise ARGV --json` in a process of its own: its exit status and its answer."""
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", *argv, "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, orjson.loads(done.stdout) if done.stdout.strip() else done.stderr


def writing(root: Path) -> Path:
    """A Claude Code session whose last prompt is being answered: the tool call's result
    is not in yet, so its turn is open and Claude Code is still writing it."""
    t = cf.Transcript(cf.SID)
    t.exchange("What does the build do?", "It compiles and runs the tests.")
    t.user("Now run the slow tests, please")
    t.assistant(
        [
            {
                "type": "tool_use",
                "id": "toolu_01slow",
                "name": "Bash",
                "input": {"command": "pytest -m slow", "description": "slow tests"},
            }
        ],
        stop="tool_use",
    )
    return t.write(cf.project_file(root, t))
