"""The host's listening end: newline-delimited JSON-RPC over asyncio streams, on
`unix:PATH` (the socket file is 0600 before it listens) or `tcp:HOST:PORT` (a token is
required, compared in constant time; non-loopback addresses are refused unless
explicitly allowed). Messages have a size limit; the server has a connection limit and
drops clients that stop reading.

A connection that has not said `host.hello` with the token does not count toward the
connection limit: such connections have a small pool of their own (`MAX_UNAUTHENTICATED`;
when it is full, a newcomer pushes out the one that has waited longest) and
`LOGIN_TIMEOUT` seconds to log in before the host closes them, so idle sockets opened by
anyone on the machine cannot lock the real clients out: a client says hello at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
from typing import Any, Final

import orjson

from forkwise.core.errors import HostUnavailable, RpcError
from forkwise.core.host.carriers import Address, parse_address
from forkwise.core.host.rpc import INVALID_REQUEST, PARSE_ERROR, RpcConnection, RpcServer
from forkwise.core.host.wire_codec import MAX_MESSAGE, MAX_REPLY, decode, encode, named_twice

Json = dict[str, Any]

MAX_CONNECTIONS: Final = 64
#: connections still to say host.hello with the token, at once
MAX_UNAUTHENTICATED: Final = 16
#: seconds a connection has to log in
LOGIN_TIMEOUT: Final = 10.0
#: bytes a message may have before its connection logged in (a host.hello is ~100)
LOGIN_LIMIT: Final = 64 * 1024
#: requests one connection may have running; past that the host stops reading from it
MAX_IN_FLIGHT: Final = 64
MAX_WRITE_BUFFER: Final = 64 * 1024 * 1024


class SocketServer:
    """A listening host endpoint; `address` is the bound one (the real port for tcp:…:0)."""

    def __init__(
        self,
        rpc: RpcServer,
        address: Address,
        *,
        limit: int,
        max_connections: int,
        max_in_flight: int = MAX_IN_FLIGHT,
        max_unauthenticated: int = MAX_UNAUTHENTICATED,
        login_timeout: float = LOGIN_TIMEOUT,
        confine: bool = False,
    ) -> None:
        self.rpc = rpc
        #: its clients are remote ones, confined to what the host's user configured
        self.confine = confine
        self.address = address
        self.limit = limit
        self.max_connections = max_connections
        self.max_in_flight = max_in_flight
        self.max_unauthenticated = max_unauthenticated
        self.login_timeout = login_timeout
        #: connections yet to log in, oldest first
        self._waiting: dict[RpcConnection, asyncio.StreamWriter] = {}
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._inode: int | None = None

    @classmethod
    async def start(
        cls,
        rpc: RpcServer,
        address: Address | str,
        *,
        allow_remote: bool = False,
        limit: int = MAX_MESSAGE,
        max_connections: int = MAX_CONNECTIONS,
        max_in_flight: int = MAX_IN_FLIGHT,
        max_unauthenticated: int = MAX_UNAUTHENTICATED,
        login_timeout: float = LOGIN_TIMEOUT,
        confine: bool | None = None,
    ) -> SocketServer:
        """`confine`: treat clients as remote ones (confinement.py); by default those on
        a tcp address are, those on a unix socket (0600: the host's user) are not."""
        a = parse_address(address) if isinstance(address, str) else address
        if a.kind == "tcp":
            if rpc.token is None:
                raise RpcError("a tcp listener needs a token (--token-file)", address=str(a))
            if not a.loopback and not allow_remote:
                raise RpcError(
                    f"refusing to listen on non-loopback {a.host!r} without allow_remote",
                    address=str(a),
                )
        self = cls(
            rpc,
            a,
            limit=limit,
            max_connections=max_connections,
            max_in_flight=max_in_flight,
            max_unauthenticated=max_unauthenticated,
            login_timeout=login_timeout,
            confine=a.kind == "tcp" if confine is None else confine,
        )
        if a.kind == "unix":
            sock = _bind_unix(a.path)
            self._inode = os.stat(a.path).st_ino
            self._server = await asyncio.start_unix_server(self._accept, sock=sock, limit=limit)
        else:
            self._server = await asyncio.start_server(self._accept, a.host, a.port, limit=limit)
            port = self._server.sockets[0].getsockname()[1]
            self.address = Address("tcp", host=a.host, port=port)
        return self

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(reader, writer))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def send(message: Json) -> None:
            if writer.is_closing():
                return
            if writer.transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
                writer.close()  # the client stopped reading; do not buffer without end
                return
            data = encode(message)
            if len(data) > MAX_REPLY:  # more than a client reads: say so instead
                if "id" not in message:
                    return  # a notification: the client reads the events by pages
                data = encode(_oversized(message.get("id"), len(data)))
            writer.write(data + b"\n")

        # no socket client is trusted: without a configured token (a 0600 unix socket) the
        # server treats every connection as authenticated; with one, host.hello must match
        conn = self.rpc.connect(send, trusted=False, hangup=writer.close, remote=self.confine)
        deadline: asyncio.TimerHandle | None = None
        try:
            logged_in = sum(1 for c in self.rpc.connections if c.authenticated and c is not conn)
            if logged_in >= self.max_connections:
                conn.reject(INVALID_REQUEST, "the host has too many connections")
                return
            if not conn.authenticated:
                self._make_room()
                self._waiting[conn] = writer
                deadline = asyncio.get_running_loop().call_later(
                    self.login_timeout, self._login_expired, conn, writer
                )
            await self._read(reader, conn)
        finally:
            self._waiting.pop(conn, None)
            if deadline is not None:
                deadline.cancel()
            await conn.close()
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _make_room(self) -> None:
        """Push out the longest-waiting connections that have not logged in yet, until a
        newcomer fits in their pool."""
        for conn in [c for c in self._waiting if c.authenticated or c.closed]:
            del self._waiting[conn]
        while len(self._waiting) >= self.max_unauthenticated:
            oldest = next(iter(self._waiting))
            writer = self._waiting.pop(oldest)
            oldest.reject(INVALID_REQUEST, "too many connections are waiting to log in")
            writer.close()

    def _login_expired(self, conn: RpcConnection, writer: asyncio.StreamWriter) -> None:
        if not conn.authenticated and not conn.closed:
            conn.reject(INVALID_REQUEST, f"no host.hello within {self.login_timeout:g} s")
            writer.close()

    async def _read(self, reader: asyncio.StreamReader, conn: RpcConnection) -> None:
        while not conn.closed:
            if not conn.authenticated:
                await conn.room(1)  # its hello answered first: that decides the limit
            await conn.room(self.max_in_flight)
            # a connection that has not logged in buffers a login's worth at most, not a
            # request's (16 of them held 256 MB until they timed out): the stream's own
            # limit, the one readline checks as data arrives, is lowered until then
            limit = self.limit if conn.authenticated else min(self.limit, LOGIN_LIMIT)
            setattr(reader, "_limit", limit)  # noqa: B010 (asyncio keeps it private)
            try:
                line = await reader.readline()
            except ValueError:
                conn.reject(INVALID_REQUEST, f"message larger than {limit} bytes")
                return
            except OSError:
                return
            if not line:
                return
            if not line.strip():
                continue
            try:
                message = decode(line)
            except orjson.JSONDecodeError:
                conn.reject(PARSE_ERROR, "not JSON")
                continue
            twice = named_twice(line)
            if twice is not None:
                rid = message.get("id") if isinstance(message, dict) else None
                conn.reject(INVALID_REQUEST, f"the request names {twice!r} twice", rid)
                continue
            conn.receive(message)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self.address.kind == "unix":
            with contextlib.suppress(OSError):
                if os.stat(self.address.path).st_ino == self._inode:
                    os.unlink(self.address.path)


def _oversized(request_id: object, size: int) -> Json:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": INVALID_REQUEST,
            "message": f"the answer holds {size} bytes, more than {MAX_REPLY} a client reads",
            "data": {"code": RpcError.code, "details": {"size": size}},
        },
    }


def _bind_unix(path: str) -> socket.socket:
    """A unix socket bound at `path` with mode 0600 set before anyone can connect."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(mode):
            raise RpcError(f"{path} exists and is not a socket", path=path)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except OSError:
            os.unlink(path)  # a stale socket from a host that is gone
        else:
            raise HostUnavailable(f"another host is listening on {path}", path=path)
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
    except OSError as exc:
        sock.close()
        raise RpcError(f"cannot listen on {path}: {exc}", path=path) from exc
    return sock


async def serve(rpc: RpcServer, address: str, **options: Any) -> SocketServer:
    """Listen on `address` for clients of `rpc`'s host."""
    try:
        return await SocketServer.start(rpc, address, **options)
    except OSError as exc:
        raise HostUnavailable(f"cannot listen on {address}: {exc}", address=address) from exc
