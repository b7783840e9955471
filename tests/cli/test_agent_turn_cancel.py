"""A turn the agent an imported session came from is still writing is that agent's: a
cancel of it is refused by the host (`agent-owns-turn`), whichever entry point asks, and
nothing is written into Forkwise's copy. Real Claude Code files, a real store on disk and
the real `forkwise` command in its own process."""

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
        check=False, capture_output=True, text=True, timeout=120,
    )
    return done.returncode, orjson.loads(done.stdout) if done.stdout.strip() else done.stderr


def writing(root: Path) -> Path:
    """A Claude Code session whose last prompt is being answered: the tool call's result
    is not in yet, so its turn is open and Claude Code is still writing it."""
    t = cf.Transcript(cf.SID)
    t.exchange("What does the build do?", "It compiles and runs the tests.")
    t.user("Now run the slow tests, please")
    t.assistant([{"type": "tool_use", "id": "toolu_01slow", "name": "Bash",
                  "input": {"command": "pytest -m slow", "description": "slow tests"}}],
                stop="tool_use")
    return t.write(cf.project_file(root, t))


def test_cancelling_a_turn_its_agent_writes_is_refused_and_writes_nothing(
        tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, report = forkwise("sessions", "import", "--store", store,
                            str(writing(tmp_path / "claude")))
    assert code == 0, report
    log = Path(store) / "sessions" / f"{SID}.jsonl"
    before = log.read_bytes()

    code, answer = forkwise("sessions", "cancel", SID, "--store", store)
    assert code == 1, answer
    assert isinstance(answer, dict), answer
    assert answer["error"]["code"] == "agent-owns-turn", answer
    # no cancel and no turn end written into the copy, nor when the command's host closed
    assert log.read_bytes() == before


def test_a_session_of_forkwise_s_own_is_cancelled_as_before(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, made = forkwise("sessions", "new", "--id", "mine", "--store", store)
    assert code == 0, made
    code, answer = forkwise("sessions", "cancel", "mine", "--store", store)
    assert (code, answer) == (0, {"id": "mine", "cancelled": True})
