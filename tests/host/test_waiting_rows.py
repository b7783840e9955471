"""A session list's rows say which session waits for the person's approval (`waiting`,
`waitingTools`), as listed and as the row notifications update it while a turn asks,
is answered and ends, over every carrier."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import TIMEOUT, Env, LogBuilder, Recorder, open_env, write_log


@pytest.mark.asyncio
async def test_the_row_of_a_turn_that_asks_says_it_waits_until_answered(env: Env) -> None:
    (env.work / "notes.txt").write_text("remember the milk\n")
    await env.client.follow()
    recorder = Recorder()
    await env.client.subscribe(recorder)
    s = await env.client.create_session("tools")
    assert (s["waiting"], s["waitingTools"]) == (False, [])
    outcome = await env.client.prompt_and_wait(s["id"], '/tool read_file {"path": "notes.txt"}')
    assert outcome["status"] == "waiting"
    asked = await recorder.wait_for(
        lambda n: n["kind"] == "catalogue/upsert" and n["summary"]["waiting"], TIMEOUT
    )
    assert (asked["summary"]["running"], asked["summary"]["waitingTools"]) == (True, ["read_file"])
    assert env.client.catalogue[s["id"]]["waiting"] is True
    [row] = [r for r in await env.client.list_sessions() if r["id"] == s["id"]]
    assert (row["running"], row["waiting"], row["waitingTools"]) == (True, True, ["read_file"])

    seen = len(recorder.notes)
    done = await env.client.approve_and_wait(s["id"], outcome["approvals"][0]["approval"], True)
    assert done["status"] == "completed"
    upserts = [
        n["summary"] for n in recorder.notes[seen:]
        if n["kind"] == "catalogue/upsert" and n["summary"]["id"] == s["id"]
    ]  # fmt: skip
    assert upserts, "the answer updated the row"
    assert upserts[0]["waiting"] is False  # answered: the row no longer waits, the turn runs
    assert (upserts[-1]["running"], upserts[-1]["waiting"]) == (False, False)
    assert env.client.catalogue[s["id"]]["waiting"] is False


@pytest.mark.asyncio
async def test_after_a_crash_the_list_waits_only_where_a_request_is_unanswered(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    """A turn a crash left open is closed as interrupted by the listing; one that waits
    for an approval stays open, and its row says so; one whose request was answered
    before the crash is no longer waiting."""
    crashed = LogBuilder()
    crashed.turn("t1", "fine")
    crashed.add("turn/start", turn="t2")
    waiting = LogBuilder()
    waiting.turn("t1", "fine")
    waiting.waiting_turn("t2", "list_dir", {"path": "."})
    answered = LogBuilder()
    approval = answered.waiting_turn("t1", "shell", {"cmd": "ls"})
    answered.add("approval/resolve", turn="t1", approval=approval, decision="approved")
    store = tmp_path / "store"
    for sid, log in (("crashed", crashed), ("waiting", waiting), ("answered", answered)):
        write_log(store, sid, log.records)
    async with open_env(carrier, tmp_path, sock_dir) as env:
        rows = {r["id"]: r for r in await env.client.list_sessions()}
        states = {sid: (r["running"], r["waiting"], r["waitingTools"]) for sid, r in rows.items()}
        assert states == {
            "crashed": (False, False, []),
            "waiting": (True, True, ["list_dir"]),
            "answered": (False, False, []),
        }
        last = env.events("answered")[-1]
        assert (last["type"], last["status"]) == ("turn/end", "interrupted")
