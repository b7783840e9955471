"""Security checks of issue 7 that the store suite does not cover: ids and paths from the
CLI and from the model, file modes of everything the host and CLI write, the token check."""

from __future__ import annotations

import asyncio
import hmac
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.cli import main as cli
from forkwise.core.client.client import Client
from forkwise.core.errors import Unauthorized
from forkwise.core.host import rpc
from forkwise.core.host.host import Host
from forkwise.core.host.shared_store import StoreEndpoint
from forkwise.core.host.socket_server import MAX_CONNECTIONS, serve
from forkwise.core.host.wire_codec import MAX_MESSAGE

BAD_IDS = ["../x", "../../etc/passwd", "/tmp/abs", "a/b", "..", ".x", "a\x00b", "x" * 65, "x\n"]


def cli_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue()) if out.getvalue() else err.getvalue()


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_cli_refuses_hostile_session_ids(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, made = cli_json("sessions", "new", "--store", store, "--id", "good")
    assert code == 0, made
    code, made = cli_json("sessions", "prompt", "good", "a completed turn", "--store", store)
    assert code == 0, made
    cut = tmp_path / "cut.txt"
    before = listing(tmp_path)
    for bad in BAD_IDS:
        for argv in (
            ["sessions", "new", "--id", bad],
            ["sessions", "show", bad],
            ["sessions", "fork", bad],
            ["sessions", "fork", "good", "--child", bad],
            ["sessions", "fork", bad, "--at", "1"],
            ["sessions", "prompt", bad, "hi"],
            ["sessions", "truncate", bad, "--message", "user:x:1"],
        ):
            code, result = cli_json(*argv, "--store", store)
            assert code == 1, (argv, bad)
            assert result["error"]["code"] == "invalid-session-id", (argv, bad, result)
        header = {"type": "session", "version": 1, "id": bad, "created": "2026-01-01T00:00:00Z",
                  "cwd": "", "parentSession": None, "seedLength": 0, "meta": {}}
        cut.write_bytes(orjson.dumps(header) + b"\n")
        code, result = cli_json("sessions", "import", str(cut), "--store", store)
        assert code == 1, bad
        assert result["imported"] == [], result
        (failed,) = result["failed"]
        assert failed["error"]["code"] in ("invalid-session-id", "corrupt-log"), result
    cut.unlink()
    assert listing(tmp_path) == sorted(p for p in before if p != "cut.txt")


@pytest.fixture
def no_umask() -> Iterator[None]:
    """Modes must come from the code, not from a friendly umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.asyncio
@pytest.mark.usefixtures("no_umask")
async def test_everything_the_host_writes_is_private(store: Path) -> None:
    host = Host.open(store, default_cwd=str(store.parent))
    endpoint = await StoreEndpoint.start(host, store)
    assert endpoint is not None
    client = await Client.connect(endpoint.address)
    try:
        sid = (await client.create_session("private"))["id"]
        await client.prompt_and_wait(sid, "first")
        await client.prompt_and_wait(sid, "second")
        child = await client.fork(sid)
        await client.attach("elsewhere", child["id"])
        messages = await client.messages(sid)
        second = [m for m in messages if m["role"] == "user"][1]["id"]
        await client.fork_at_message(sid, second, include_message=False, replace=True)
        sock = store / "host.sock"
        assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
    finally:
        await client.close()
        await endpoint.close()
        await host.close()
    # the CLI runs its own event loop: in a thread, as from another process
    code, _ = await asyncio.to_thread(
        cli_json, "sessions", "new", "--store", str(store), "--title", "by the cli"
    )
    assert code == 0
    fresh = store.parent / "fresh"
    code, _ = await asyncio.to_thread(cli_json, "sessions", "new", "--store", str(fresh))
    assert code == 0
    for root in (store, fresh):
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
        files = listing(root)
        assert {"sessions", "writer.lock", "index.json"} <= set(files)
        for rel in files:
            mode = stat.S_IMODE((root / rel).lstat().st_mode)
            want = 0o700 if (root / rel).is_dir() else 0o600
            assert mode == want, (rel, oct(mode))
    assert "workspaces.json" in listing(store)


@pytest.mark.asyncio
async def test_the_token_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[object, object]] = []
    real = hmac.compare_digest

    def recording(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)  # rpc imports hmac when it checks
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    server_rpc = rpc.RpcServer(host, token="the-right-token")
    server = await serve(server_rpc, "tcp:127.0.0.1:0")
    try:
        assert (server.limit, server.max_connections) == (MAX_MESSAGE, MAX_CONNECTIONS)
        assert server.address.host == "127.0.0.1"
        for wrong in ("the-right-tokeX", "Xhe-right-token", "", "the-right-token-and-more"):
            with pytest.raises(Unauthorized):
                await Client.connect(str(server.address), wrong)
        client = await Client.connect(str(server.address), "the-right-token")
        await client.close()
    finally:
        await server.close()
        await server_rpc.close()
        await host.close()
    assert len(compared) == 5
    assert all(b == b"the-right-token" for _, b in compared)


@pytest.mark.asyncio
async def test_tool_paths_from_the_model_stay_in_the_session_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    (work / "out").symlink_to(tmp_path, target_is_directory=True)
    host = Host.open(tmp_path / "store", default_cwd=str(work))
    client = await Client.in_process(host)
    try:
        sid = (await client.create_session("confined"))["id"]
        for tool, path in [
            ("read_file", "a\x00b"),
            ("read_file", "out/secret.txt"),
            ("list_dir", "out"),
            ("read_file", "x" * 5000),
            ("read_file", "a/" * 3000 + "b"),
            ("list_dir", "/"),
        ]:
            call = f"/tool {tool} " + orjson.dumps({"path": path}).decode()
            outcome = await client.prompt_and_wait(sid, call)
            approval = outcome["approvals"][0]["approval"]
            done = await client.approve_and_wait(sid, approval, True)
            assert done["status"] == "completed", (path[:20], done)
            result = [e for e in await client.events(sid) if e["type"] == "tool/result"][-1]
            assert result["isError"] is True, path[:20]
        events = orjson.dumps(await client.events(sid))
        assert b"top secret" not in events
        assert b"secret.txt\"" not in events.replace(b"out/secret.txt", b"")
    finally:
        await client.close()
        await host.close()
