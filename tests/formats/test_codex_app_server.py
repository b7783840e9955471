"""The real Codex writes rollouts the reader understands, and opens what the writer wrote.

Runs `codex app-server` (npm @openai/codex, pinned in codex_app_server.py) offline against
a fake Responses endpoint on 127.0.0.1. It fails, not skips, when codex cannot be
installed or started: the npm registry must be reachable the first time (the package is
then cached outside the checkout).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_app_server import AppServer, FakeResponses, codex_binary, write_config
from codex_fixtures import write_bare

from forkwise.core.formats.base import ExportInput, ImportedSession
from forkwise.core.formats.codex import WRITER, CodexReader
from forkwise.core.log.events import Event
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

ADDED = "added in forkwise"
ANSWER = "forkwise answer"


@pytest.fixture
def api() -> Iterator[FakeResponses]:
    fake = FakeResponses()
    yield fake
    fake.close()


def prompts(session: ImportedSession) -> list[str]:
    return [
        e["parts"][0]["text"]
        for e in session.events
        if e["type"] == "message" and e["role"] == "user"
    ]


def without_src(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "src"} for e in events]


def with_added_turn(session: ImportedSession, ancestors: list[ImportedSession]) -> ExportInput:
    ts = session.events[-1]["ts"]
    turn = "turn-forkwise-1"
    added = [
        {"type": "turn/start", "turn": turn},
        {
            "type": "message",
            "id": "user:added:1",
            "role": "user",
            "turn": turn,
            "parts": [{"type": "text", "text": ADDED}],
        },
        {
            "type": "message",
            "id": "assistant:answer:1",
            "role": "assistant",
            "turn": turn,
            "parts": [{"type": "text", "text": ANSWER}],
        },
        {"type": "turn/end", "turn": turn, "status": "completed"},
    ]
    events = [dict(e) for e in session.events] + [dict(e, ts=ts) for e in added]
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    return ExportInput(
        session_id=session.id,
        cwd=session.cwd,
        title=f"{session.title} (Forkwise)",
        created=session.created,
        events=events,
        sources={s.source.id: s.source for s in [*ancestors, session]},
    )


def turn_texts(thread: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for turn in thread.get("turns") or []:
        for item in turn["items"]:
            if item["type"] == "userMessage":
                out.append(("user", " ".join(c.get("text", "") for c in item["content"])))
            elif item["type"] == "agentMessage":
                out.append(("assistant", item["text"]))
    return out


def test_codex_rollouts_round_trip_through_the_real_app_server(
    tmp_path: Path, api: FakeResponses
) -> None:
    binary = codex_binary()
    home = tmp_path / "codex"
    write_config(home, api.port)
    cwd = tmp_path / "proj"
    cwd.mkdir()
    log = tmp_path / "app-server.log"

    # 1. codex writes: a legacy thread with a tool call, a named fork of it with its own
    #    turn, and a paginated thread (the 0.171 default) with its last turn reverted
    server = AppServer(binary, home, log)
    try:
        legacy = server.request("thread/start", {"cwd": str(cwd), "historyMode": "legacy"})
        tid = legacy["thread"]["id"]
        server.turn(tid, "hello there")
        server.turn(tid, "please use a tool")
        server.request("thread/name/set", {"threadId": tid, "name": "Probe thread"})
        fid = server.request("thread/fork", {"threadId": tid})["thread"]["id"]
        server.turn(fid, "in the fork")
        pid = server.request("thread/start", {"cwd": str(cwd)})["thread"]["id"]
        server.turn(pid, "first paginated")
        second = server.turn(pid, "second paginated")
        server.request("thread/revert", {"threadId": pid, "beforeTurnId": second["turn"]["id"]})
    finally:
        server.close()

    # 2. the reader: lineage, shared prefixes, rollback branch, valid records
    reader = CodexReader()
    reader.live_seconds = 0
    files = list(reader.session_files(home / "sessions"))
    sessions = {s.id: s for f in files for s in reader.read(f)}
    parent, fork = sessions[f"codex-{tid}"], sessions[f"codex-{fid}"]
    assert prompts(parent) == ["hello there", "please use a tool"]
    assert parent.title == "Probe thread"
    results = [e for e in parent.events if e["type"] == "tool/result"]
    assert [r["tool"] for r in results] == ["exec_command"]
    assert "hello" in results[0]["output"]
    assert (fork.parent, fork.relation) == (parent.id, "fork")
    assert prompts(fork) == ["hello there", "please use a tool", "in the fork"]
    assert without_src(fork.events[: len(parent.events)]) == without_src(parent.events)
    paginated = sessions[f"codex-{pid}"]
    assert prompts(paginated) == ["first paginated"]
    (reverted,) = [s for s in sessions.values() if s.parent == paginated.id]
    assert prompts(reverted) == ["first paginated", "second paginated"]
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    try:
        for s in sessions.values():
            events = [Event.from_record(dict(e, seq=i)) for i, e in enumerate(s.events, 1)]
            store.import_session(SessionHeader(id=s.id, created=s.created, cwd=s.cwd), events)
    finally:
        store.close()

    # 3. the writer: the fork and the reverted paginated thread, each with a Forkwise turn
    exported_fork = WRITER.export(with_added_turn(fork, [parent]), home, None)
    exported_pag = WRITER.export(with_added_turn(paginated, [reverted]), home, None)
    old = reader.read(write_bare(home, "0199aaaa-0000-7000-8000-00000000aaaa"))[0]
    exported_old = WRITER.export(with_added_turn(old, []), home, None)
    assert exported_fork.resume == f"codex resume {exported_fork.id}"

    # 4. codex lists, reads and resumes them, and sends their history to the model
    server = AppServer(binary, home, log)
    try:
        listed = {t["id"]: t for t in server.request("thread/list", {})["data"]}
        assert exported_fork.id in listed
        assert exported_pag.id in listed
        assert listed[exported_fork.id]["name"] == "Probe thread (Forkwise)"
        read = server.request("thread/read", {"threadId": exported_fork.id, "includeTurns": True})[
            "thread"
        ]
        assert read["forkedFromId"] == fid
        assert turn_texts(read) == [
            ("user", "hello there"),
            ("assistant", "Answer 1."),
            ("user", "please use a tool"),
            ("assistant", "The command printed hello."),
            ("user", "in the fork"),
            ("assistant", "Answer 4."),
            ("user", ADDED),
            ("assistant", ANSWER),
        ]
        read = server.request("thread/read", {"threadId": exported_pag.id, "includeTurns": True})[
            "thread"
        ]
        assert [t for t in turn_texts(read) if t[0] == "user"] == [
            ("user", "first paginated"),
            ("user", ADDED),
        ]
        read = server.request("thread/read", {"threadId": exported_old.id, "includeTurns": True})[
            "thread"
        ]
        assert [t for t in turn_texts(read) if t[0] == "user"] == [
            ("user", "what is here?"),
            ("user", "thanks"),
            ("user", ADDED),
        ]
        server.request("thread/resume", {"threadId": exported_fork.id})
        asked = len(api.requests)
        done = server.turn(exported_fork.id, "continue please")
        assert done["turn"]["status"] == "completed"
        sent = json.dumps(api.requests[asked:])
        assert ADDED in sent
        assert ANSWER in sent
        assert "in the fork" in sent
    finally:
        server.close()
