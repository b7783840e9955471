"""Issue 18, item 8: a fork copies what is on disk, checked against what the store
believes. A file broken or deleted behind a running host's back is read again (and
refused) rather than forked from memory, and the index never vouches for it afterwards.
A real `forkwise host` process, real files, a real unix socket, then a real CLI."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.client.client import Client
from forkwise.core.errors import ForkwiseError
from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    sock_dir = Path(tempfile.mkdtemp(prefix="fwfd-", dir="/tmp"))
    store = tmp_path / "store"
    proc = subprocess.Popen(
        [FORKWISE, "host", "--store", str(store), "--listen", f"unix:{sock_dir}/h.sock"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        assert proc.stdout.readline().startswith(b"forkwise host listening")
        yield f"unix:{sock_dir}/h.sock", store, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=TIMEOUT)
        for child in sock_dir.iterdir():
            child.unlink()
        sock_dir.rmdir()


def break_a_line(path: Path) -> None:
    """Damage the second event's line without changing the file's size."""
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"X" + lines[2][1:]
    path.write_bytes(b"\n".join(lines))


async def error_of(call: Any) -> str:
    try:
        await call
    except ForkwiseError as exc:
        return exc.code
    raise AssertionError("the fork succeeded from memory")


@pytest.mark.asyncio
async def test_a_fork_never_copies_a_file_changed_behind_the_hosts_back(
    served: tuple[str, Path, subprocess.Popen[bytes]],
) -> None:
    address, store, proc = served
    client = await Client.connect(address, None, follow=False)
    try:
        broken = (await client.create_session("broken", cwd="/tmp"))["id"]
        gone = (await client.create_session("gone", cwd="/tmp"))["id"]
        for sid in (broken, gone):
            assert (await client.prompt_and_wait(sid, "a turn"))["status"] == "completed"
            await client.fork(sid)  # loaded and forked once: the host holds it in memory
        before = sorted(os.listdir(store / "sessions"))
        break_a_line(store / "sessions" / f"{broken}.jsonl")
        (store / "sessions" / f"{gone}.jsonl").unlink()
        assert await error_of(client.fork(broken)) == "corrupt-log"
        assert await error_of(client.fork(gone)) in {"source-not-found", "stale-session"}
        assert sorted(os.listdir(store / "sessions")) == sorted(set(before) - {f"{gone}.jsonl"})
    finally:
        await client.close()
    proc.send_signal(signal.SIGTERM)  # the host saves what it knows into the index
    proc.wait(TIMEOUT)
    path = store / "sessions" / f"{broken}.jsonl"
    st = path.stat()
    entry = orjson.loads((store / "index.json").read_bytes())["sessions"].get(broken)
    assert entry is None or (entry["size"], entry["mtime"]) != (st.st_size, st.st_mtime_ns)
    done = subprocess.run(
        [FORKWISE, "sessions", "fork", broken, "--store", str(store), "--json"],
        capture_output=True, text=True, timeout=TIMEOUT, env=child_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert orjson.loads(done.stdout)["error"]["code"] == "corrupt-log"
