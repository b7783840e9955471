"""A turn the agent an imported session came from is still writing is that agent's: a
cancel of it, a prompt into it or an answer to its tool call is refused by the host
(`agent-owns-turn`), whichever entry point asks, and nothing is written into Forkwise's
copy. Real Claude Code files, a real store on disk and the real `forkwise` command in its
own process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.agent_writing import SID, forkwise, writing


@pytest.mark.parametrize(
    "argv",
    [
        # before: exit 0 'cancelled', and a turn end appended by the closing host
        ("cancel", SID),
        # before: the host denied the agent's pending tool call, ended the agent's turn
        # `failed` and started a turn of its own in the copy
        ("prompt", SID, "and the fast ones?"),
        ("approve", SID, "approval:any"),
    ],
    ids=["cancel", "prompt", "approve"],
)
def test_writing_into_a_turn_its_agent_writes_is_refused_and_writes_nothing(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    store = str(tmp_path / "store")
    code, report = forkwise(
        "sessions", "import", "--store", store, str(writing(tmp_path / "claude"))
    )
    assert code == 0, report
    log = Path(store) / "sessions" / f"{SID}.jsonl"
    before = log.read_bytes()

    code, answer = forkwise("sessions", *argv, "--store", store)
    assert code == 1, answer
    assert isinstance(answer, dict), answer
    assert answer["error"]["code"] == "agent-owns-turn", answer
    # nothing written into the copy, nor when the command's host closed
    assert log.read_bytes() == before


def test_a_session_of_forkwise_s_own_is_cancelled_as_before(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, made = forkwise("sessions", "new", "--id", "mine", "--store", store)
    assert code == 0, made
    code, answer = forkwise("sessions", "cancel", "mine", "--store", store)
    assert (code, answer) == (0, {"id": "mine", "cancelled": True})
