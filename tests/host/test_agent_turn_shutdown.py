"""A host that made an imported session's agent (here for a model change it refuses) and then closes
leaves the turn the session's own agent is still writing as it was: the host ends only the
turns it runs. A real Claude Code file imported by the real `forkwise` command, then a real
host on that store."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkwise.core.errors import AgentOwnsTurn, SessionBusy
from tests.cli.agent_writing import SID, forkwise, writing
from tests.host.conftest import open_env


@pytest.mark.asyncio
async def test_closing_the_host_writes_nothing_into_an_agents_open_turn(
    tmp_path: Path, sock_dir: Path
) -> None:
    code, report = forkwise("sessions", "import", "--store", str(tmp_path / "store"),
                            str(writing(tmp_path / "claude")))  # fmt: skip
    assert code == 0, report
    log = tmp_path / "store" / "sessions" / f"{SID}.jsonl"
    before = log.read_bytes()
    async with open_env("inproc", tmp_path, sock_dir) as env:
        with pytest.raises(SessionBusy):  # the agent's turn runs; its agent is made here
            await env.client.set_model(SID, "offline", "forkwise-offline")
        # with the session's agent made, a prompt is still refused, not written
        with pytest.raises(AgentOwnsTurn):
            await env.client.prompt(SID, "and the fast ones?")
    # before: the closing host appended `turn/end interrupted` into the agent's turn
    assert log.read_bytes() == before
