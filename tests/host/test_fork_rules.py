"""`session.fork` and `session.forkAtMessage` over every carrier: the anchor rules of
the anchor rule, the model installed before publication, workspace attach failure, replace in
place with its truncate notification, and the busy refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forkwise.core.errors import (
    BoundaryInOpenTurn,
    ForkUnavailable,
    InvalidBoundary,
    MessageNotFound,
    SessionBusy,
    SourceNotFound,
    WorkspaceAttachFailed,
)
from forkwise.core.runtime.workspaces import MemoryWorkspaces

from .conftest import Env, LogBuilder, Recorder, open_env, write_log


def anchor_log() -> tuple[list[dict[str, Any]], str]:
    """seq 1 model/select · 2-5 turn t1 completed · 6-8 turn t2 failed (no reply)
    · 9 session/title · 10-14 turn t3 open, waiting on an approval."""
    b = LogBuilder()
    b.add("model/select", provider="offline", model="model-a")
    assert b.turn("t1", "first") == 5
    b.add("turn/start", turn="t2")
    b.add(
        "message",
        id="user:t2:0001",
        role="user",
        turn="t2",
        parts=[{"type": "text", "text": "second"}],
    )
    assert b.add("turn/end", turn="t2", status="failed", error="boom") == 8
    assert b.add("session/title", title="anchors") == 9
    approval = b.waiting_turn("t3", "list_dir", {"path": "."})
    assert len(b.records) == 14
    return b.records, approval


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("at_seq", "boundary"),
    [(1, 5), (2, 5), (3, 5), (5, 5), (6, 8), (8, 8), (None, 8), (15, 8), (1000, 8)],
)
async def test_anchor_picks_first_turn_end_at_or_after(
    env: Env, at_seq: int | None, boundary: int
) -> None:
    records, _ = anchor_log()
    write_log(env.store_dir, "src", records)
    child = await env.client.fork("src", at_seq)
    assert child["seedLength"] == boundary
    assert child["parentSession"] == "src"
    events = env.events(child["id"])
    assert [e["seq"] for e in events] == list(range(1, boundary + 3))
    assert events[boundary]["type"] == "history/fork"
    assert events[boundary]["boundary"] == boundary
    assert events[:boundary] == records[:boundary]  # a copy of the prefix, seq unchanged
    assert child["id"] in env.client.catalogue


@pytest.mark.asyncio
@pytest.mark.parametrize("at_seq", [9, 10, 11, 14])
async def test_anchor_in_open_turn_is_unavailable_never_an_earlier_turn(
    env: Env, at_seq: int
) -> None:
    records, _ = anchor_log()
    path = write_log(env.store_dir, "src", records)
    before = set(env.host.store.ids())
    with pytest.raises(ForkUnavailable) as caught:
        await env.client.fork("src", at_seq)
    assert caught.value.details["session_id"] == "src"
    assert set(env.host.store.ids()) == before  # nothing was written
    assert path.read_bytes().count(b"\n") == 15  # the approval-pending turn stays open


@pytest.mark.asyncio
async def test_trailing_standalone_anchor_is_unavailable(env: Env) -> None:
    b = LogBuilder()
    b.turn("t1", "only")
    b.add("session/title", title="tail")
    b.add("model/select", provider="offline", model="model-x")
    write_log(env.store_dir, "tail", b.records)
    with pytest.raises(ForkUnavailable) as caught:
        await env.client.fork("tail", 5)
    assert caught.value.details["session_id"] == "tail"
    with pytest.raises(ForkUnavailable):
        await env.client.fork("tail", 6)
    assert (await env.client.fork("tail", 7))["seedLength"] == 4  # past the end: last turn


@pytest.mark.asyncio
async def test_no_completed_turn_is_unavailable(env: Env) -> None:
    b = LogBuilder()
    b.add("session/title", title="nothing yet")
    write_log(env.store_dir, "empty", b.records)
    with pytest.raises(ForkUnavailable):
        await env.client.fork("empty")
    with pytest.raises(InvalidBoundary):
        await env.client.fork("empty", 0)
    with pytest.raises(SourceNotFound):
        await env.client.fork("missing")


@pytest.mark.asyncio
async def test_child_runs_first_turn_on_source_latest_model(env: Env) -> None:
    """The source's last model/select lies after the boundary; the child still gets it,
    recorded after its history/fork, and its first turn runs on it."""
    b = LogBuilder()
    b.add("model/select", provider="offline", model="model-a")
    b.turn("t1", "hello")
    b.add("model/select", provider="offline", model="model-x", reasoning="high")
    write_log(env.store_dir, "src", b.records, cwd=str(env.work))
    child = await env.client.fork("src")
    assert child["seedLength"] == 5
    assert child["model"] == "model-x"  # already on the published row
    events = env.events(child["id"])
    assert [e["type"] for e in events[5:]] == ["history/fork", "model/select"]
    assert events[6]["model"] == "model-x"
    assert events[6]["reasoning"] == "high"

    outcome = await env.client.prompt_and_wait(child["id"], "which model?")
    assert outcome["status"] == "completed"
    assert "model-x" in outcome["reply"]
    steps = [e for e in env.events(child["id"]) if e["type"] == "step/start"]
    assert [(s["provider"], s["model"], s["reasoning"]) for s in steps] == [
        ("offline", "model-x", "high")
    ]
    assert env.events("src") == b.records  # the source records nothing


@pytest.mark.asyncio
async def test_fork_of_live_session_messages_carry_origin(env: Env) -> None:
    s = await env.client.create_session("live")
    await env.client.prompt_and_wait(s["id"], "one")
    session = env.client.session(s["id"])
    child = await session.fork()
    source_msgs = await session.messages()
    child_msgs = await child.messages()
    assert [m["id"] for m in child_msgs] == [m["id"] for m in source_msgs]
    assert all(m["origin"]["session_id"] == s["id"] for m in child_msgs)
    assert all("origin" not in m for m in source_msgs)
    outcome = await env.client.prompt_and_wait(child.id, "two")
    assert outcome["status"] == "completed"
    assert len(await session.messages()) == 2  # the branch never writes back


class RefusingWorkspaces(MemoryWorkspaces):
    """A workspace policy whose attach refuses once `refuse` is set."""

    refuse = False

    def attach(self, workspace: str, session_id: str) -> None:
        if self.refuse:
            raise WorkspaceAttachFailed(f"workspace {workspace!r} is read-only")
        super().attach(workspace, session_id)


@pytest.mark.asyncio
async def test_attach_failure_reconciles_child_before_raising(
    carrier: str, tmp_path: Path, sock_dir: Path
) -> None:
    workspaces = RefusingWorkspaces()
    async with open_env(carrier, tmp_path, sock_dir, workspaces=workspaces) as env:
        s = await env.client.create_session("ws")
        await env.client.prompt_and_wait(s["id"], "hi")
        workspaces.refuse = True
        seen = Recorder()
        await env.client.subscribe(seen)
        with pytest.raises(WorkspaceAttachFailed) as caught:
            await env.client.fork(s["id"])
        child = caught.value.details["childId"]
        assert child in env.client.catalogue  # reconciled before the error surfaced
        assert env.client.catalogue[child]["parentSession"] == s["id"]
        await seen.wait_for(
            lambda n: n["kind"] == "catalogue/upsert" and n["summary"]["id"] == child
        )
        assert [e["type"] for e in env.events(child)][-2:] == ["history/fork", "model/select"]
        # the published child is a working session
        outcome = await env.client.prompt_and_wait(child, "still usable")
        assert outcome["status"] == "completed"
        # without host notifications only the client's reconcile step can know the child
        await env.client.call("session.unsubscribe")
        messages = await env.client.messages(s["id"])
        with pytest.raises(WorkspaceAttachFailed) as caught2:
            await env.client.fork_at_message(s["id"], messages[1]["id"])
        second = caught2.value.details["childId"]
        first_end = next(e["seq"] for e in env.events(s["id"]) if e["type"] == "turn/end")
        assert env.client.catalogue[second]["seedLength"] == first_end
        assert any(
            n["kind"] == "catalogue/upsert" and n["summary"]["id"] == second for n in seen.notes
        )
        groups = {g["name"]: g["sessions"] for g in await env.client.workspaces()}
        assert groups == {"default": [s["id"]]}


@pytest.mark.asyncio
async def test_children_join_the_source_workspace(env: Env) -> None:
    s = await env.client.create_session("ws")
    await env.client.attach("project", s["id"])
    await env.client.prompt_and_wait(s["id"], "hi")
    child = await env.client.fork(s["id"])
    groups = {g["name"]: g["sessions"] for g in await env.client.workspaces()}
    assert groups["project"] == [s["id"], child["id"]]
    assert (env.store_dir / "workspaces.json").exists()


async def two_turns(env: Env) -> tuple[str, list[dict[str, Any]]]:
    s = await env.client.create_session("edit")
    await env.client.prompt_and_wait(s["id"], "first question")
    await env.client.prompt_and_wait(s["id"], "second question")
    return s["id"], await env.client.messages(s["id"])


@pytest.mark.asyncio
async def test_fork_at_message_include_and_exclude(env: Env) -> None:
    sid, msgs = await two_turns(env)
    session = env.client.session(sid)
    first_user, first_reply, second_user, _ = msgs
    through = await session.fork(first_reply["id"])
    assert [m["id"] for m in await through.messages()] == [first_user["id"], first_reply["id"]]
    before = await session.fork(message_id=second_user["id"], include_message=False)
    assert [m["id"] for m in await before.messages()] == [first_user["id"], first_reply["id"]]
    fork_event = env.events(before.id)[-2]
    assert fork_event["type"] == "history/fork"
    assert fork_event["anchorMessage"] == second_user["id"]
    with pytest.raises(BoundaryInOpenTurn):
        await session.fork(message_id=first_reply["id"], include_message=False)
    with pytest.raises(MessageNotFound):
        await session.fork("assistant:nope:0000")


@pytest.mark.asyncio
async def test_replace_truncates_in_place_and_notifies(env: Env) -> None:
    sid, msgs = await two_turns(env)
    session = env.client.session(sid)
    seen = Recorder()
    await session.subscribe(seen)
    second_user = msgs[2]
    assert await session.fork(replace=True) is session  # no message: nothing changes
    assert len(await session.messages()) == 4
    same = await session.fork(message_id=second_user["id"], include_message=False, replace=True)
    assert same is session
    note = await seen.wait_for(lambda n: n["kind"] == "session/truncate")
    through = second_user["seq"] - 2  # the event before the turn the message opens
    assert note == {
        "kind": "session/truncate",
        "sessionId": sid,
        "variant": "session",
        "type": "truncate",
        "through_sequence": through,
    }
    assert [m["id"] for m in await session.messages()] == [msgs[0]["id"], msgs[1]["id"]]
    assert all(e["type"] != "history/fork" for e in env.events(sid))
    assert env.client.catalogue[sid]["messages"] == 2
    outcome = await env.client.prompt_and_wait(sid, "the edited question")
    assert outcome["status"] == "completed"
    assert [m["text"] for m in await session.messages()][2] == "the edited question"


@pytest.mark.asyncio
async def test_replace_refused_while_waiting_for_approval(env: Env) -> None:
    sid, msgs = await two_turns(env)
    outcome = await env.client.prompt_and_wait(sid, '/tool list_dir {"path": "."}')
    assert outcome["status"] == "waiting"
    with pytest.raises(SessionBusy):
        await env.client.fork_at_message(sid, msgs[2]["id"], replace=True)
    # a fork (not replace) is fine: the waiting turn and its approval are not copied
    child = await env.client.fork(sid)
    info = await env.client.get_session(child["id"])
    assert info["pendingApprovals"] == []
    assert info["state"]["running"] is False
    await env.client.cancel(sid)
    same = await env.client.fork_at_message(sid, msgs[2]["id"], replace=True)
    assert same["id"] == sid


@pytest.mark.asyncio
async def test_events_are_paged(env: Env) -> None:
    sid, _ = await two_turns(env)
    every = await env.client.events(sid)
    assert [e["seq"] for e in every] == list(range(1, len(every) + 1))
    page = await env.client.call("session.events", {"sessionId": sid, "after": 2, "limit": 3})
    assert [e["seq"] for e in page["events"]] == [3, 4, 5]
    assert page["more"] is True
    assert await env.client.events(sid, after=len(every) - 1) == every[-1:]
    assert len(await env.client.events(sid, limit=4)) == 4
