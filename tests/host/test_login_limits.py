"""Issue 18, item 3: connections that never log in cannot lock the real clients out.
Idle TCP connections without the token have a pool of their own and a login deadline; a
client with the token still gets in. A real `forkwise host` process and real sockets."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.host.socket_server import MAX_CONNECTIONS, SocketServer

from .conftest import TIMEOUT, TOKEN


@pytest.fixture
def tcp_host(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    os.chmod(token, 0o600)
    proc = subprocess.Popen(
        [sys.executable, "-m", "forkwise.core.cli.main", "host", "--store",
         str(tmp_path / "store"), "--listen", "tcp:127.0.0.1:0", "--token-file", str(token)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("forkwise host listening tcp:"), line
        yield line.split()[-1], token
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=TIMEOUT)


def test_idle_connections_without_the_token_do_not_lock_out_a_client(
    tcp_host: tuple[str, Path],
) -> None:
    address, token = tcp_host
    host, port = address[len("tcp:") :].rsplit(":", 1)
    idle = [socket.create_connection((host, int(port)), timeout=TIMEOUT)
            for _ in range(MAX_CONNECTIONS + 32)]  # fmt: skip
    try:
        done = subprocess.run(
            [sys.executable, "-m", "forkwise.core.cli.main", "sessions", "list", "--connect",
             address, "--token-file", str(token), "--json"],
            capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert orjson.loads(done.stdout) == []
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.asyncio
async def test_a_connection_that_does_not_log_in_is_closed(tmp_path: Path) -> None:
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    rpc = RpcServer(host, TOKEN)
    server = await SocketServer.start(rpc, "tcp:127.0.0.1:0", login_timeout=0.5)
    try:
        reader, writer = await asyncio.open_connection(server.address.host, server.address.port)
        said = await asyncio.wait_for(reader.readline(), TIMEOUT)
        assert b"no host.hello within" in said
        assert await asyncio.wait_for(reader.read(), TIMEOUT) == b""  # closed by the host
        writer.close()
        # a client that logs in stays, past the deadline: a connection opened after it
        # that does not log in is closed at its own (later) deadline, and the client
        # still answers
        client = await Client.connect(f"tcp:127.0.0.1:{server.address.port}", TOKEN)
        try:
            later, later_writer = await asyncio.open_connection(
                server.address.host, server.address.port)
            assert b"no host.hello within" in await asyncio.wait_for(later.readline(), TIMEOUT)
            assert await asyncio.wait_for(later.read(), TIMEOUT) == b""
            later_writer.close()
            assert await client.list_sessions() == []
        finally:
            await client.close()
    finally:
        await server.close()
        await rpc.close()
        await host.close()
