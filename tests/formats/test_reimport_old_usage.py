"""A store an earlier Forkwise filled, before the readers mapped the agents' usage to
`usage` events: a Claude Code reply's tokens were a `plugin/claude/usage` event
(`{"message", "usage"}`) where a `usage` event stands now, and a Codex token count gave
no `usage` event at all. When such a source grows, the re-import must append only what
is new — neither cut the stored history back and write it again, nor refuse a stored
branch of the file as changed inside the history it shares."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import orjson
from claude_fixtures import SID, Transcript, rewound, write_old
from codex_fixtures import basic, thread_id

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import ImportedSession
from forkwise.core.host.importing import ImportReport, reader, store_sessions
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def as_before(s: ImportedSession) -> ImportedSession:
    """The session as the reader before `usage` events read it."""
    events: list[dict[str, Any]] = []
    for record in s.events:
        e = {k: v for k, v in record.items() if k != "seq"}
        if e["type"] != "usage":
            events.append(e)
        elif s.source.tool == "claude":
            old = {"message": e["message"], "usage": e["raw"], "ts": e["ts"], "src": e["src"]}
            events.append({"type": "plugin/claude/usage", **old})
        # Codex: its token_count stayed a plugin/codex/token_count event, nothing more
    s.events = events
    s.seq_first = False
    return s


def stored_before(store_dir: Path, tool: str, path: Path) -> dict[str, list[bytes]]:
    """Fill a store as the earlier reader would have; each session's stored lines."""
    store = SessionStore(JsonlBackend(store_dir))
    try:
        sessions = [as_before(s) for s in reader(tool).read(path)]
        store_sessions(store, sessions, ImportReport())
    finally:
        store.close()
    return {s.id: (store_dir / "sessions" / f"{s.id}.jsonl").read_bytes().splitlines()
            for s in sessions}  # fmt: skip


def reimport(tool: str, path: Path, store_dir: Path) -> dict[str, Any]:
    os.utime(path, None)
    code, report = run_json("sessions", "import", "--from", tool, str(path),
                            "--store", str(store_dir))  # fmt: skip
    assert code == 0, report
    assert report["failed"] == []
    return report


def check_appended(store_dir: Path, before: dict[str, list[bytes]], grown: str) -> None:
    """Every stored session kept its lines; the grown one has new lines after them."""
    for sid, lines in before.items():
        now = (store_dir / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
        assert now[: len(lines)] == lines, sid  # nothing cut back and written again
        if sid == grown:
            assert len(now) > len(lines)
        else:
            assert now == lines, sid


def test_a_claude_source_stored_before_usage_events_grows_by_appending(tmp_path: Path) -> None:
    t = Transcript(SID)
    rewound(t)  # the main line and a rewound branch: two stored sessions of one file
    path = write_old(t, tmp_path / "claude")
    store_dir = tmp_path / "store"
    before = stored_before(store_dir, "claude", path)
    main = f"claude-{SID}"
    assert len(before) == 2
    assert any(b"plugin/claude/usage" in line for line in before[main])
    t.exchange("fourth question", "fourth answer")
    write_old(t, tmp_path / "claude")
    report = reimport("claude", path, store_dir)
    assert report["updated"] == [main]
    check_appended(store_dir, before, main)
    code, shown = run_json("sessions", "show", main, "--store", str(store_dir))
    assert code == 0
    said = [p["text"] for e in shown["events"] if e["type"] == "message" for p in e["parts"]]
    assert said[-2:] == ["fourth question", "fourth answer"]
    assert said.count("first question") == 1
    # the new reply's tokens as the readers give them now
    assert shown["events"][-1]["type"] in ("usage", "turn/end")
    assert any(e["type"] == "usage" for e in shown["events"][-4:])


def test_a_codex_source_stored_before_usage_events_grows_by_appending(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    rollout = basic(3)
    path = rollout.write(home)
    store_dir = tmp_path / "store"
    before = stored_before(store_dir, "codex", path)
    sid = f"codex-{thread_id(3)}"
    assert list(before) == [sid]
    rollout.prompt("one more")
    rollout.tokens(9000)
    rollout.answer("More.", item_id="msg_more")
    rollout.write(home)
    report = reimport("codex", path, store_dir)
    assert report["updated"] == [sid]
    check_appended(store_dir, before, sid)
