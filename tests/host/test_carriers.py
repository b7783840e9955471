"""The socket carrier itself: file mode, tokens, bind policy, limits, the wire format."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from forkwise.core.client.client import Client
from forkwise.core.errors import HostUnavailable, InvalidText, RpcError, Unauthorized
from forkwise.core.host.carriers import parse_address
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.host.socket_server import SocketServer

from .conftest import TIMEOUT, TOKEN, open_env


@pytest_asyncio.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    h = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    yield h
    await h.close()


async def raw_exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, line: bytes
) -> dict[str, Any]:
    writer.write(line)
    await writer.drain()
    reply = await asyncio.wait_for(reader.readline(), TIMEOUT)
    message: dict[str, Any] = orjson.loads(reply)
    return message


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    await writer.wait_closed()


@pytest.mark.asyncio
async def test_unix_socket_is_0600_and_removed_on_close(host: Host, sock_dir: Path) -> None:
    path = sock_dir / "h.sock"
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{path}")
    try:
        mode = os.stat(path).st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600
    finally:
        await server.close()
        await rpc.close()
    assert not path.exists()


@pytest.mark.asyncio
async def test_stale_socket_replaced_live_one_and_plain_file_refused(
    host: Host, sock_dir: Path
) -> None:
    stale = sock_dir / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))
    s.close()  # the file stays, nobody listens
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{stale}")
    try:
        with pytest.raises(HostUnavailable):
            await SocketServer.start(rpc, f"unix:{stale}")
        plain = sock_dir / "plain"
        plain.write_text("user data")
        with pytest.raises(RpcError):
            await SocketServer.start(rpc, f"unix:{plain}")
        assert plain.read_text() == "user data"
    finally:
        await server.close()
        await rpc.close()


@pytest.mark.asyncio
async def test_tcp_requires_the_token(host: Host) -> None:
    rpc = RpcServer(host, token=TOKEN)
    server = await SocketServer.start(rpc, "tcp:127.0.0.1:0")
    address = str(server.address)
    try:
        with pytest.raises(Unauthorized):
            await Client.connect(address, token="wrong-token")
        with pytest.raises(Unauthorized):
            await Client.connect(address)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.address.port)
        try:  # nothing is served before host.hello
            reply = await raw_exchange(
                reader, writer, b'{"jsonrpc":"2.0","id":1,"method":"session.list"}\n'
            )
            assert reply["error"]["data"]["code"] == "unauthorized"
        finally:
            await close_writer(writer)
        client = await Client.connect(address, token=TOKEN)
        try:
            assert await client.list_sessions() == []
        finally:
            await client.close()
    finally:
        await server.close()
        await rpc.close()


@pytest.mark.asyncio
async def test_tcp_bind_policy(host: Host) -> None:
    with pytest.raises(RpcError, match="token"):
        await SocketServer.start(RpcServer(host), "tcp:127.0.0.1:0")
    with pytest.raises(RpcError, match="non-loopback"):
        await SocketServer.start(RpcServer(host, token=TOKEN), "tcp:0.0.0.0:0")
    assert parse_address("tcp:localhost:7").loopback
    assert parse_address("tcp:[::1]:7").loopback
    assert not parse_address("tcp:192.168.1.2:7").loopback
    with pytest.raises(RpcError):
        parse_address("http://example.org")


@pytest.mark.asyncio
async def test_wire_errors_and_size_limit(host: Host, sock_dir: Path) -> None:
    path = sock_dir / "w.sock"
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{path}", limit=4096)
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 20)
    try:
        bad = await raw_exchange(reader, writer, b"{not json\n")
        assert bad["error"]["code"] == -32700
        missing = await raw_exchange(
            reader, writer, b'{"jsonrpc":"2.0","id":2,"method":"session.nope"}\n'
        )
        assert missing["error"]["code"] == -32601
        params = await raw_exchange(
            reader, writer, b'{"jsonrpc":"2.0","id":3,"method":"session.get","params":{}}\n'
        )
        assert (params["id"], params["error"]["code"]) == (3, -32602)
        typed = await raw_exchange(
            reader,
            writer,
            b'{"jsonrpc":"2.0","id":4,"method":"session.get","params":{"sessionId":"zz"}}\n',
        )
        assert typed["error"]["code"] == -32000
        assert typed["error"]["data"] == {
            "code": "source-not-found",
            "details": {"session_id": "zz"},
        }
        huge = b'{"jsonrpc":"2.0","id":5,"method":"session.list","pad":"' + b"x" * 8000 + b'"}\n'
        too_big = await raw_exchange(reader, writer, huge)
        assert "larger than" in too_big["error"]["message"]
        assert await asyncio.wait_for(reader.read(), TIMEOUT) == b""  # and it hangs up
    finally:
        await close_writer(writer)
        await server.close()
        await rpc.close()


@pytest.mark.asyncio
async def test_connection_limit(host: Host, sock_dir: Path) -> None:
    path = sock_dir / "l.sock"
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{path}", max_connections=1)
    first = await Client.connect(f"unix:{path}")
    try:
        with pytest.raises(HostUnavailable):
            await Client.connect(f"unix:{path}")
        assert await first.list_sessions() == []
    finally:
        await first.close()
        await server.close()
        await rpc.close()


@pytest.mark.asyncio
async def test_no_host_and_lost_host(host: Host, sock_dir: Path) -> None:
    with pytest.raises(HostUnavailable):
        await Client.connect(f"unix:{sock_dir / 'nobody.sock'}")
    path = sock_dir / "gone.sock"
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{path}")
    client = await Client.connect(f"unix:{path}")
    try:
        await server.close()
        with pytest.raises(HostUnavailable):  # in flight or refused at once: never hangs
            await asyncio.wait_for(client.list_sessions(), TIMEOUT)
    finally:
        await client.close()
        await rpc.close()


@pytest.mark.asyncio
async def test_a_result_that_cannot_be_sent_is_answered_with_an_error(
    carrier: str, tmp_path: Path, sock_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verb's result holding text that is not UTF-8 (a path decoded with surrogate
    escapes) cannot go on the wire: the caller gets the error naming it, not a wait without
    end for an answer, and the connection goes on answering."""
    from forkwise.core.host import rpc

    async def unsendable(_conn: Any, _params: Any) -> Any:
        return {"cwd": b"/work/\xff".decode("utf-8", "surrogateescape")}

    monkeypatch.setitem(rpc.METHODS, "test.unsendable", unsendable)
    async with open_env(carrier, tmp_path, sock_dir) as env:
        with pytest.raises(InvalidText, match="cwd"):
            await asyncio.wait_for(env.client.call("test.unsendable"), TIMEOUT)
        assert await asyncio.wait_for(env.client.list_sessions(), TIMEOUT) == []
