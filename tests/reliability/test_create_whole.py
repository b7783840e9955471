"""Issue 18, items 6 and 7: a create that fails leaves no session behind, and a path that
is not valid UTF-8 gets a typed error (`invalid-text`), never a traceback. Real `forkwise`
processes, a real host socket, real folders with non-UTF-8 names."""

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

from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env

BAD = os.fsdecode(b"dir-\xff-name")  # a folder name that is not UTF-8


def forkwise(*argv: str, cwd: str | None = None) -> tuple[int, Any, str]:
    done = subprocess.run(
        [FORKWISE, *argv, "--json"], capture_output=True, timeout=TIMEOUT, env=child_env(),
        cwd=cwd, check=False,
    )  # fmt: skip
    text = done.stdout.decode() or "null"
    return done.returncode, orjson.loads(text), done.stderr.decode(errors="replace")


def sessions(store: Path) -> list[str]:
    return sorted(p.name for p in (store / "sessions").iterdir())


def test_a_title_that_cannot_be_stored_leaves_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert forkwise("sessions", "new", "--store", str(store), "--id", "t0")[0] == 0
    code, out, err = forkwise(
        "sessions", "new", "--store", str(store), "--id", "t1", "--title", os.fsdecode(b"b\xff")
    )
    assert code == 1, out
    assert out["error"]["code"] == "invalid-text", out
    assert "Traceback" not in err
    assert sessions(store) == ["t0.jsonl"]


def test_a_path_that_is_not_utf8_is_a_typed_error(tmp_path: Path) -> None:
    store = tmp_path / "store"
    odd = tmp_path / BAD
    odd.mkdir()
    for argv, cwd in (
        (["sessions", "new", "--store", str(store), "--cwd", str(odd)], None),
        (["sessions", "new", "--store", str(store)], str(odd)),  # the default: where it runs
    ):
        code, out, err = forkwise(*argv, cwd=cwd)
        assert code == 1, out
        assert out["error"]["code"] == "invalid-text", out
        assert "\\xff" in out["error"]["message"]
        assert "Traceback" not in err
    assert not (store / "sessions").exists() or sessions(store) == []


@pytest.fixture
def host_process(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    sock_dir = Path(tempfile.mkdtemp(prefix="fwcw-", dir="/tmp"))
    store = tmp_path / "store"
    odd = tmp_path / BAD
    odd.mkdir()
    proc = subprocess.Popen(
        [FORKWISE, "host", "--store", str(store), "--listen", f"unix:{sock_dir}/h.sock"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), cwd=str(odd),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        assert proc.stdout.readline().startswith(b"forkwise host listening")
        yield f"unix:{sock_dir}/h.sock", store
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=TIMEOUT)
        for child in sock_dir.iterdir():
            child.unlink()
        sock_dir.rmdir()


def rpc(address: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(address[len("unix:") :])
        sock.sendall(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                   "params": params}) + b"\n")  # fmt: skip
        data = b""
        while not data.endswith(b"\n"):
            more = sock.recv(65536)
            assert more, "the host hung up"
            data += more
    reply: dict[str, Any] = orjson.loads(data)
    return reply


def test_a_create_over_the_socket_is_whole_or_absent(host_process: tuple[str, Path]) -> None:
    address, store = host_process
    made = rpc(address, "session.create", {"sessionId": "ok", "cwd": "/tmp"})
    assert made["result"]["id"] == "ok", made
    for workspace in ("", "   "):
        reply = rpc(address, "session.create", {"sessionId": "w", "workspace": workspace})
        assert reply["error"]["data"]["code"] == "workspace-attach-failed", reply
    # the host's own folder is not UTF-8: a create without a cwd is refused by name
    reply = rpc(address, "session.create", {"sessionId": "here"})
    assert reply["error"]["data"]["code"] == "invalid-text", reply
    # the workspaces file cannot be written: the session written before it is taken back
    (store / "workspaces.json").unlink()
    (store / "workspaces.json").mkdir()
    reply = rpc(address, "session.create", {"sessionId": "late", "cwd": "/tmp"})
    assert reply["error"]["data"]["code"] == "workspace-attach-failed", reply
    assert sessions(store) == ["ok.jsonl"]
    listed = rpc(address, "session.list", {})["result"]
    assert [r["id"] for r in listed] == ["ok"]
