"""Hosts sharing one PostgreSQL store: the host that loses the race for a session is told
`session-busy` at once (not `turn-not-completed` after its turn failed to start, nor a
prompt queued behind the other host's open turn), and a session whose log ends inside a
turn lists the same from a folder store and from the database: `interrupted` when no live
host runs that turn, running while one does. Real `forkwise` processes, a real host
process, a real PostgreSQL server."""

from __future__ import annotations

import select
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.store.opening import open_backend
from forkwise.core.store.session_store import SessionStore

TIMEOUT = 60


def forkwise(tmp_path: Path, *argv: str) -> tuple[int, Any, str]:
    """A CLI process; its exit status, its JSON answer (or error) and its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", *argv, "--json"],
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    return done.returncode, orjson.loads(done.stdout) if done.stdout else None, done.stderr


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short folder for a unix socket (its path must fit a socket address)."""
    folder = Path(tempfile.mkdtemp(prefix="fw-", dir="/tmp"))
    yield folder
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def open_turn(location: str, sid: str) -> None:
    """A session whose log ends inside a turn, as a host killed mid-turn leaves it."""
    store = SessionStore(open_backend(location))
    try:
        store.create(sid, cwd="/tmp")
        store.append(sid, [
            {"type": "turn/start", "turn": "t1"},
            {"type": "message", "turn": "t1", "id": "user:t1", "role": "user",
             "parts": [{"type": "text", "text": "question"}]},
        ])  # fmt: skip
    finally:
        store.close()


def row(tmp_path: Path, store: str, sid: str) -> dict[str, Any]:
    code, rows, err = forkwise(tmp_path, "sessions", "list", "--store", store)
    assert code == 0, err
    [found] = [r for r in rows if r["id"] == sid]
    return dict(found)


def listed(tmp_path: Path, store: str, sid: str) -> dict[str, Any]:
    found = row(tmp_path, store, sid)
    return {k: found.get(k) for k in ("running", "interrupted")}


def test_an_open_turn_nobody_runs_lists_interrupted_from_every_backend(
    tmp_path: Path, pg_url: str
) -> None:
    folder = str(tmp_path / "store")
    open_turn(folder, "crashed")
    open_turn(pg_url, "crashed")
    from_folder = listed(tmp_path, folder, "crashed")
    assert from_folder == {"running": False, "interrupted": True}
    assert listed(tmp_path, pg_url, "crashed") == from_folder


def test_an_open_turn_a_live_host_holds_is_running_not_interrupted(
    tmp_path: Path, pg_url: str
) -> None:
    open_turn(pg_url, "live")
    holder = SessionStore(open_backend(pg_url))  # a live host, the session's writer
    try:
        holder.claim("live")
        assert listed(tmp_path, pg_url, "live") == {"running": True, "interrupted": None}
        # and another host does not close that turn under it
        code, out, _ = forkwise(tmp_path, "sessions", "delete", "live", "--store", pg_url)
        assert code == 1
        assert out["error"]["code"] == "session-busy", out
        assert len(holder.get("live").events) == 2
    finally:
        holder.close()
    # once its writer is gone, the same log is a crash's
    assert listed(tmp_path, pg_url, "live") == {"running": False, "interrupted": True}


def test_the_loser_of_a_race_for_a_session_gets_session_busy_at_once(
    tmp_path: Path, pg_url: str, socket_dir: Path
) -> None:
    code, _, err = forkwise(tmp_path, "sessions", "new", "--id", "raced", "--store", pg_url)
    assert code == 0, err
    sock = f"unix:{socket_dir / 'host.sock'}"
    host = subprocess.Popen(
        [sys.executable, "-m", "forkwise.core.cli", "host", "--store", pg_url, "--listen", sock],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    try:
        assert host.stdout is not None
        ready, _, _ = select.select([host.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        host.stdout.readline()
        # the host wins: its turn waits for an approval, open, the session its own
        code, out, err = forkwise(tmp_path, "sessions", "prompt", "raced",
                                  '/tool list_dir {"path": "."}', "--connect", sock)  # fmt: skip
        assert code == 0, err
        assert out["status"] == "waiting"
        approval = out["approvals"][0]["approval"]
        before = row(tmp_path, pg_url, "raced")
        # the loser, a host of its own on the same database: told at once, nothing written
        code, out, err = forkwise(tmp_path, "sessions", "prompt", "raced", "hello",
                                  "--store", pg_url)  # fmt: skip
        assert code == 1
        assert out["error"]["code"] == "session-busy", out
        assert row(tmp_path, pg_url, "raced") == before
        # an approval from the loser is refused the same way
        code, out, err = forkwise(tmp_path, "sessions", "approve", "raced", approval,
                                  "--store", pg_url)  # fmt: skip
        assert code == 1
        assert out["error"]["code"] == "session-busy", out
    finally:
        host.terminate()
        host.communicate(timeout=TIMEOUT)
