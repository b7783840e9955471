"""Issue 18, items 4 and 5: FIFOs, devices and links where a session file or a tool's
file is expected never hang a reader, never fill memory, and a host always exits after
SIGTERM. Real processes, real FIFOs, a real unix socket."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from forkwise.core.client.client import Client
from forkwise.core.safe_read import FileTooLarge, NotRegularFile, read_head, read_regular
from tests.reliability.conftest import FORKWISE, HERE, child_env

#: a hang shows as a timeout well before the suite's own
QUICK = 20.0


def forkwise_json(*argv: str) -> tuple[int, object]:
    done = subprocess.run(
        [FORKWISE, *argv, "--json"], capture_output=True, text=True, timeout=QUICK,
        env=child_env(), check=False,
    )
    return done.returncode, orjson.loads(done.stdout or "null")


def test_the_safe_reader_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(NotRegularFile):
            read_regular(path, follow=True)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        read_regular(link)  # a link is not followed
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    with pytest.raises(FileTooLarge):
        read_regular(big, limit=99)
    assert read_regular(big, limit=100)[0] == b"x" * 100
    assert read_head(big, 10) == b"x" * 11  # one past the limit: the caller sees "more"


def test_a_fifo_or_a_device_link_in_sessions_does_not_hang_the_cli(tmp_path: Path) -> None:
    store = tmp_path / "store"
    code, made = forkwise_json("sessions", "new", "--store", str(store), "--id", "good")
    assert code == 0, made
    os.mkfifo(store / "sessions" / "pipe.jsonl")
    (store / "sessions" / "zero.jsonl").symlink_to("/dev/zero")
    code, rows = forkwise_json("sessions", "list", "--store", str(store))
    assert code == 0, rows
    assert isinstance(rows, list)
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"good", "pipe", "zero"}
    assert by_id["good"].get("error") is None
    assert by_id["pipe"]["error"]["code"] == "storage-error"
    assert by_id["zero"]["error"]["code"] == "storage-error"
    for sid in ("pipe", "zero"):
        code, shown = forkwise_json("sessions", "show", sid, "--store", str(store))
        assert code == 1
        assert shown["error"]["code"] == "storage-error", shown  # type: ignore[index]
        code, forked = forkwise_json("sessions", "fork", sid, "--store", str(store))
        assert code == 1, forked


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="fwso-", dir="/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def start(argv: list[str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env()
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], QUICK)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("forkwise host listening"):
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"the host did not start: {err}")
    return proc


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=QUICK)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the host did not exit after SIGTERM") from None
    return proc.returncode, err


@pytest.mark.asyncio
async def test_read_file_on_a_fifo_fails_the_call_not_the_host(
    tmp_path: Path, sock_dir: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "pipe")
    sock = sock_dir / "h.sock"
    proc = start([FORKWISE, "host", "--store", str(tmp_path / "store"), "--listen", f"unix:{sock}"])
    try:
        client = await Client.connect(f"unix:{sock}", None, follow=False)
        try:
            sid = (await client.create_session("fifo", cwd=str(work)))["id"]
            asked = await asyncio.wait_for(
                client.prompt_and_wait(sid, '/tool read_file {"path": "pipe"}'), QUICK
            )
            approval = asked["approvals"][0]["approval"]
            done = await asyncio.wait_for(client.approve_and_wait(sid, approval, True), QUICK)
            assert done["status"] == "completed", done
            events = await client.events(sid)
            result = next(e for e in events if e["type"] == "tool/result")
            assert "not a regular file" in orjson.dumps(result).decode(), result
        finally:
            await client.close()
    finally:
        code, err = stop(proc)
    assert code == 0, err


def test_a_host_with_a_stuck_thread_still_exits_after_sigterm(
    tmp_path: Path, sock_dir: Path
) -> None:
    fifo = tmp_path / "nobody-writes"
    os.mkfifo(fifo)
    proc = start(
        [sys.executable, str(HERE / "stuck_host.py"), str(tmp_path / "store"),
         str(sock_dir / "h.sock"), str(fifo), "1"]
    )  # fmt: skip
    code, err = stop(proc)
    assert code == 3, err
    assert "exiting without that work" in err
    assert "stuck-in-open" in err


@pytest.mark.parametrize(
    "name", ["index.json", "index-log.json", "workspaces.json", "imports.json"]
)
def test_a_fifo_in_place_of_a_store_file_does_not_hang(tmp_path: Path, name: str) -> None:
    """Beyond the issue's list: the same rule for the store's own JSON files."""
    store = tmp_path / "store"
    (store / "sessions").mkdir(parents=True)
    os.mkfifo(store / name)
    for argv in (["sessions", "list"], ["sessions", "new", "--id", "s1"]):
        done = subprocess.run(
            [FORKWISE, *argv, "--store", str(store), "--json"], capture_output=True, text=True,
            timeout=QUICK, env=child_env(), check=False,
        )  # fmt: skip
        if done.returncode != 0:  # refused by name, never a hang or a traceback
            assert orjson.loads(done.stdout)["error"]["code"] == "storage-error", done.stdout
            assert name in done.stdout


def test_lines_split_a_span_at_a_time_are_the_lines_of_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """split_lines cuts long data at newlines a span at a time; the lines are those one
    split of the whole gives, whatever falls on a span's edge."""
    import random

    from forkwise.core import safe_read

    monkeypatch.setattr(safe_read, "_SPLIT_SPAN", 7)
    rng = random.Random(3)
    samples = [b"", b"\n", b"\n\n", b"a" * 20, b"a" * 7 + b"\n" + b"b" * 7 + b"\n"]
    samples += [bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 60))) for _ in range(500)]
    for data in samples:
        assert safe_read.split_lines(data) == data.split(b"\n"), data
