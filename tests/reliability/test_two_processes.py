"""Two processes, one store (issue 7): real processes, real lock, real socket.

A store has one writer. The process holding the lock serves `<store>/host.sock`; another
`forkwise` finding the store locked goes through that socket, or — if nothing answers —
reads read-only and says so, and refuses to write. Whatever runs concurrently, every
acknowledged write is on disk exactly once.
"""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import orjson

from .conftest import FORKWISE, HERE, PYTHON, Proc, child_env, run, user_texts

HOST_PROMPTS = 15
LOOP_PROMPTS = 15
CLI_PROMPTS = 3

#: a second writer process: PROMPTS turns `<prefix>-<i>` through the real CLI entry point
CLI_LOOP = """
import io, sys, orjson
from forkwise.core.cli import main as cli
store, sid, prefix, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if sid == "new":
    out = io.StringIO()
    assert cli.main(["sessions", "new", "--store", store, "--json"], out=out) == 0
    sid = orjson.loads(out.getvalue())["id"]
for i in range(n):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sessions", "prompt", sid, f"{prefix}-{i}", "--store", store, "--json"],
                    out=out, err=err)
    if code != 0 or orjson.loads(out.getvalue())["status"] != "completed":
        sys.exit(f"{prefix}-{i}: {code} {out.getvalue()} {err.getvalue()}")
print("ok", sid)
"""

#: holds the writer lock and serves nothing (a stuck or foreign writer)
LOCK_HOLDER = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1] + "/writer.lock", timeout=0)
lock.acquire()
print("held", flush=True)
sys.stdin.read()
lock.release()
"""


def start_host(store: Path, prompts: int = HOST_PROMPTS) -> tuple[Proc, str]:
    host = Proc([PYTHON, str(HERE / "store_host.py"), str(store), str(prompts)])
    word, sid = host.line().split()
    assert word == "ready"
    return host, sid


def forkwise_json(*argv: str, env: dict[str, str] | None = None) -> object:
    done = run([FORKWISE, *argv, "--json"], env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return orjson.loads(done.stdout)


def test_a_second_process_writes_through_the_running_host(store: Path) -> None:
    host, host_sid = start_host(store)
    try:
        sock = store / "host.sock"
        assert stat.S_ISSOCK(os.lstat(sock).st_mode)
        assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o700
        # three writers at once: the host itself, a CLI loop on the host's session and
        # on its own new session, and separate `forkwise` processes
        host.send("go")
        same = Proc([PYTHON, "-c", CLI_LOOP, str(store), host_sid, "same", str(LOOP_PROMPTS)])
        own = Proc([PYTHON, "-c", CLI_LOOP, str(store), "new", "own", str(LOOP_PROMPTS)])
        try:
            for i in range(CLI_PROMPTS):
                out = forkwise_json("sessions", "prompt", host_sid, f"cli-{i}", "--store", str(store))
                assert out["status"] == "completed"  # type: ignore[index]
            child = forkwise_json("sessions", "fork", host_sid, "--store", str(store))
            listed = forkwise_json("sessions", "list", "--store", str(store))
            assert child["child"] in {row["id"] for row in listed}  # type: ignore[index, union-attr]
            for proc in (same, own):
                code, out, err = proc.finish()
                assert code == 0, err
                assert out.startswith("ok ")
        finally:
            same.kill()
            own.kill()
        assert host.line() == f"wrote {HOST_PROMPTS}"
        code, out, err = host.finish()
        assert (code, out.strip()) == (0, "closed"), err
    finally:
        host.kill()
    assert not (store / "host.sock").exists()  # removed before the lock was released
    expected = (
        [f"host-{i}" for i in range(HOST_PROMPTS)]
        + [f"same-{i}" for i in range(LOOP_PROMPTS)]
        + [f"own-{i}" for i in range(LOOP_PROMPTS)]
        + [f"cli-{i}" for i in range(CLI_PROMPTS)]
    )
    seen = user_texts(store)
    assert sorted(seen.elements()) == sorted(expected)  # every write, exactly once


def test_two_cli_writers_take_turns_on_the_lock(store: Path) -> None:
    """No host: each command holds the lock briefly and the other waits for it."""
    first = Proc([PYTHON, "-c", CLI_LOOP, str(store), "new", "one", str(LOOP_PROMPTS)])
    second = Proc([PYTHON, "-c", CLI_LOOP, str(store), "new", "two", str(LOOP_PROMPTS)])
    try:
        for proc in (first, second):
            code, _, err = proc.finish()
            assert code == 0, err
    finally:
        first.kill()
        second.kill()
    expected = [f"{p}-{i}" for p in ("one", "two") for i in range(LOOP_PROMPTS)]
    assert sorted(user_texts(store).elements()) == sorted(expected)


def test_locked_and_silent_store_reads_read_only_and_refuses_writes(store: Path) -> None:
    sid = forkwise_json("sessions", "new", "--store", str(store), "--title", "before")["id"]  # type: ignore[index]
    before = sorted(p.name for p in (store / "sessions").iterdir())
    holder = Proc([PYTHON, "-c", LOCK_HOLDER, str(store)])
    env = child_env(FORKWISE_LOCK_WAIT="0.3")
    try:
        assert holder.line() == "held"
        listed = run([FORKWISE, "sessions", "list", "--store", str(store), "--json"], env)
        assert listed.returncode == 0, listed.stderr
        assert [r["id"] for r in orjson.loads(listed.stdout)] == [sid]
        assert "read-only" in listed.stderr
        for argv in (
            ["sessions", "new", "--store", str(store)],
            ["sessions", "prompt", sid, "lost?", "--store", str(store)],
            ["sessions", "fork", sid, "--store", str(store)],
        ):
            refused = run([FORKWISE, *argv, "--json"], env)
            assert refused.returncode == 1, (argv, refused.stdout)
            error = orjson.loads(refused.stdout)["error"]
            assert error["code"] == "store-busy"
            assert "nothing was changed" in error["message"]
    finally:
        code, _, err = holder.finish()
        assert code == 0, err
    assert sorted(p.name for p in (store / "sessions").iterdir()) == before
    assert "lost?" not in user_texts(store)


def test_a_killed_hosts_socket_is_stale_and_replaced(store: Path) -> None:
    host, sid = start_host(store, prompts=0)
    host.popen.send_signal(signal.SIGKILL)
    host.kill()
    assert (store / "host.sock").exists()  # left behind; the lock went with the process
    # nobody answers there: a writer takes the lock directly, a new host replaces it
    forkwise_json("sessions", "prompt", sid, "after-kill", "--store", str(store))
    again, _ = start_host(store, prompts=0)
    try:
        out = forkwise_json("sessions", "prompt", sid, "via-new-host", "--store", str(store))
        assert out["status"] == "completed"  # type: ignore[index]
        code, _, err = again.finish()
        assert code == 0, err
    finally:
        again.kill()
    assert user_texts(store) == {"after-kill": 1, "via-new-host": 1}


def test_a_second_headless_host_is_refused_with_the_address(store: Path) -> None:
    host, _ = start_host(store, prompts=0)
    try:
        done = run([FORKWISE, "host", "--store", str(store), "--listen", f"unix:{store}/x.sock"])
        assert done.returncode == 1
        assert "store-busy" in done.stderr
        assert f"unix:{store}/host.sock" in done.stderr
        assert not (store / "x.sock").exists()
    finally:
        code, _, err = host.finish()
        assert code == 0, err
