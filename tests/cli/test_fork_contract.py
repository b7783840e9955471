"""The seed's fork contract through the one CLI path (the CLI goes through the host): an
exact boundary is applied exactly or refused by its code — `end` inside a turn a crash
left open is `boundary-in-open-turn` (the host's recovery must not close the turn first
and fork past it), a taken `--child` id is `duplicate-session-id` before any boundary is
looked at, and a boundary past any log's end is `invalid-boundary` (not an encoding
failure of the request). On a folder store and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from test_cli import run

OPEN_TURN = """\
{"type":"session","version":1,"id":"open-1","created":"2026-01-01T00:00:00Z","cwd":"/work/x","parentSession":null,"seedLength":0,"meta":{}}
{"seq":1,"type":"session/title","ts":"2026-01-01T00:00:01Z","title":"Left open"}
{"seq":2,"type":"turn/start","ts":"2026-01-01T00:00:02Z","turn":"turn:1"}
{"seq":3,"type":"message","ts":"2026-01-01T00:00:03Z","turn":"turn:1","id":"user:hello:0001","role":"user","parts":[{"type":"text","text":"hello"}]}
{"seq":4,"type":"message","ts":"2026-01-01T00:00:04Z","turn":"turn:1","id":"assistant:hi:0002","role":"assistant","parts":[{"type":"text","text":"hi there"}]}
{"seq":5,"type":"turn/end","ts":"2026-01-01T00:00:05Z","turn":"turn:1","status":"completed"}
{"seq":6,"type":"turn/start","ts":"2026-01-01T00:00:07Z","turn":"turn:2"}
{"seq":7,"type":"message","ts":"2026-01-01T00:00:08Z","turn":"turn:2","id":"user:again:0003","role":"user","parts":[{"type":"text","text":"again"}]}
"""
# turn 2 was left open by a crash: no approval pending, so serving it would close it


@pytest.fixture(params=["folder", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store (a folder, or a schema of the test database) holding `open-1` and `taken`."""
    if request.param == "folder":
        where = str(tmp_path / "store")
    else:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        where = request.getfixturevalue("pg_url")
    log = tmp_path / "open-1.jsonl"
    log.write_text(OPEN_TURN)
    assert run("sessions", "import", str(log), "--store", where)[0] == 0
    assert run("sessions", "new", "--id", "taken", "--store", where)[0] == 0
    return where


def fork(store: str, *argv: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run("sessions", "fork", "open-1", *argv, "--store", store, "--json")
    return code, orjson.loads(out)


def error(store: str, *argv: str) -> str:
    code, out = fork(store, *argv)
    assert code == 1, out
    found = out["error"]
    assert isinstance(found, dict)
    return str(found["code"])


def events_of(store: str, sid: str) -> int:
    code, out, _ = run("sessions", "list", "--store", store, "--json")
    assert code == 0
    return int(next(r["events"] for r in orjson.loads(out) if r["id"] == sid))


def test_end_inside_a_turn_left_open_is_refused(store: str) -> None:
    assert error(store, "--boundary", "end") == "boundary-in-open-turn"
    assert error(store, "--boundary", "7") == "boundary-in-open-turn"
    assert events_of(store, "open-1") == 7  # refused before anything was written
    assert fork(store, "--boundary", "5", "--child", "kid") == (
        0,
        {"child": "kid", "seedLength": 5},
    )


def test_a_taken_child_id_is_reported_first(store: str) -> None:
    for boundary in ("999", "7", "end", "3"):
        assert error(store, "--boundary", boundary, "--child", "taken") == "duplicate-session-id"


def test_a_boundary_past_any_end_is_an_invalid_boundary(store: str) -> None:
    for huge in ("100000000000000000000", "-100000000000000000000", "9223372036854775808"):
        assert error(store, "--boundary", huge) == "invalid-boundary", huge
    assert error(store, "--at", "100000000000000000000") == "invalid-boundary"
    assert error(store, "--boundary", "9223372036854775807") == "invalid-boundary"
