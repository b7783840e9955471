"""Carriers: how JSON-RPC messages travel between a client and a host.

* in-process (the default): the client and the host share the event loop; messages pass
  through an orjson round trip, so they have exactly the shapes they would have on a wire
  (a turn's notes are made in those shapes and go to one client uncopied: FreshNote, and
  so do a listing's rows, once their text is checked as the wire would check it: FreshRows);
* socket: newline-delimited JSON over asyncio streams, on `unix:PATH` (the socket file is
  0600 before it listens) or `tcp:HOST:PORT` (a token is required, compared in constant
  time; non-loopback addresses are refused unless explicitly allowed). Messages have a size
  limit; the server has a connection limit and drops clients that stop reading.

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
from collections.abc import Callable
from typing import Any, Final, NamedTuple, Protocol

import orjson

from forkwise.core.errors import HostUnavailable, RpcError
from forkwise.core.host.rpc import INVALID_REQUEST, PARSE_ERROR, RpcConnection, RpcServer
from forkwise.core.log.event_log import gc_paused
from forkwise.core.log.text import check_text, find_invalid
from forkwise.core.runtime.fresh_notes import take, take_rows
from forkwise.core.safe_read import MAX_SESSION_BYTES

Json = dict[str, Any]
Receive = Callable[[Json], None]
Closed = Callable[[BaseException | None], None]

#: what a client may send the host in one message (a request: a prompt, a setting)
MAX_MESSAGE: Final = 16 * 1024 * 1024
#: what the host may send a client in one message, and what a client reads: an answer
#: carries whole events, and one event may be as large as a session file (an imported
#: tool output of 20 MB); the host never sends more, the client accepts that much
MAX_REPLY: Final = 2 * MAX_SESSION_BYTES
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


def encode(message: Json) -> bytes:
    try:
        return orjson.dumps(message, default=str)
    except TypeError as exc:
        found = find_invalid(message.get("params", message.get("result")))
        if found is not None:  # a path or name that is not UTF-8: say which (log/text.py)
            check_text(found[1], found[0])
        raise RpcError(f"cannot encode a message: {exc}") from exc


def decode(data: bytes) -> Any:
    """A message off the wire. A context of 100,000 events is ~40 MB of JSON whose
    containers are all kept: the cyclic collector is paused meanwhile (each of its passes
    would walk all of them; decoded JSON holds no cycle)."""
    if len(data) < 1 << 20:
        return orjson.loads(data)
    with gc_paused():
        return orjson.loads(data)


#: the members of a request whose value decides what it does
_MEMBERS: Final = ("jsonrpc", "id", "method", "params")


def named_twice(data: bytes) -> str | None:
    """The member of a request object named twice (`"method"` twice: which one runs
    would be the decoder's choice, and a filter reading the first one sees another
    request than the host, which takes the last), or None. Only a message where such a
    name appears twice at all is decoded again, keeping the pairs."""
    if not any(data.count(b'"%s"' % name.encode()) > 1 for name in _MEMBERS):
        return None
    import json

    top: list[list[tuple[str, Any]]] = []

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        top.append(found)  # the outermost object is the last one made
        return dict(found)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except ValueError:
        return None
    if not top:
        return None
    names = [name for name, _ in top[-1]]
    return next((n for n in _MEMBERS if names.count(n) > 1), None)


def copied(message: Json) -> Json:
    """A message as the other side of a socket would get it: neither side holds the
    other's objects."""
    decoded: Json = decode(encode(message))
    return decoded


def _as_is(message: Json) -> Json:
    return message


#: what a value orjson would encode as something else must raise instead of (a subclass,
#: a dataclass, a date): the default, `str`, is not given
_CHECKS: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def as_sent(rows: list[Json]) -> list[Json] | None:
    """FreshRows (fresh_notes.py) as they are when the wire would deliver them alike, or
    None (then they are copied as any message, and fail as a socket's would). They are
    encoded, which checks in C what the wire checks (text that is not UTF-8, an integer
    out of range, a value of a type JSON has not); the decode, ~70% of the round trip, is
    skipped: 100,000 rows (56 MB of JSON) took 0.16 s to encode and 0.37 s to decode."""
    try:
        orjson.dumps(rows, option=_CHECKS)
    except TypeError:
        return None
    return rows


class Carrier(Protocol):
    """The client side of a carrier."""

    async def start(self, receive: Receive, closed: Closed) -> None: ...
    async def send(self, message: Json) -> None: ...
    async def close(self) -> None: ...


# --- in-process ---------------------------------------------------------------------


class InProcessCarrier:
    """A client and a host in one process. Each message is copied as a socket would (the
    sides never share objects, and a request is checked as the wire checks it), except
    with `shared` what the host sends: that is handed over as it is, for a one-shot
    caller that only writes a result out and drops it (the CLI) — a 100,000-event
    context is ~40 MB that a copy would encode and decode once more — and except a
    `FreshNote` (fresh_notes.py), which the first connection takes without a copy, and
    `FreshRows` whose values the wire would deliver as they are (`as_sent`)."""

    def __init__(self, server: RpcServer, *, shared: bool = False) -> None:
        self.server = server
        self._conn: RpcConnection | None = None
        self._receive: Receive | None = None
        self._pass: Callable[[Json], Json] = _as_is if shared else copied
        self._inbox: list[Json] = []

    async def start(self, receive: Receive, closed: Closed) -> None:
        self._receive = receive
        self._conn = self.server.connect(self._deliver, trusted=True)

    def _deliver(self, message: Json) -> None:
        # handed over on the loop's next turn, all that came meanwhile at once: the order
        # a socket would have, and the host is never re-entered
        if self._receive is not None:
            self._inbox.append(self._handed(message))
            if len(self._inbox) == 1:
                asyncio.get_running_loop().call_soon(self._hand_over)

    def _handed(self, message: Json) -> Json:
        """`message` as the client gets it: a note made for one delivery goes to the first
        connection as it is, and so do a listing's rows (checked as the wire would check
        them, unless the results are `shared`: they never were); the rest as `_pass` has it."""
        params = take(message.get("params"))
        if params is not None:
            return {**message, "params": params}
        rows = take_rows(message.get("result"))
        if rows is not None and (self._pass is _as_is or as_sent(rows) is not None):
            return {**message, "result": rows}
        return self._pass(message)

    def _hand_over(self) -> None:
        inbox, self._inbox = self._inbox, []
        for message in inbox:
            if self._receive is not None:
                try:
                    self._receive(message)
                except Exception as exc:  # as the loop would report a failed callback
                    asyncio.get_running_loop().call_exception_handler(
                        {"message": "a client failed on a message", "exception": exc}
                    )

    async def send(self, message: Json) -> None:
        if self._conn is None or self._conn.closed:
            raise HostUnavailable("the in-process host connection is closed")
        self._conn.receive(copied(message))  # checked as a socket would: invalid text

    async def close(self) -> None:
        self._receive = None
        if self._conn is not None:
            await self._conn.close()


# --- addresses ----------------------------------------------------------------------


class Address(NamedTuple):
    """Where a host listens. A named tuple (immutable, compared by value) rather than a
    frozen dataclass: every CLI process imports this module, and making a frozen slotted
    dataclass class takes ~0.5 ms of CPU (it compiles its methods), a named tuple ~0.1."""

    kind: str  # "unix" | "tcp"
    path: str = ""
    host: str = ""
    port: int = 0

    def __str__(self) -> str:
        return f"unix:{self.path}" if self.kind == "unix" else f"tcp:{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        if self.kind == "unix" or self.host == "localhost":
            return True
        import ipaddress  # only a tcp address has a host to check

        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_address(text: str) -> Address:
    """`unix:PATH` or `tcp:HOST:PORT`."""
    kind, _, rest = text.partition(":")
    if kind == "unix" and rest:
        return Address("unix", path=os.path.abspath(os.path.expanduser(rest)))
    if kind == "tcp":
        host, _, port = rest.rpartition(":")
        host = host.strip("[]")
        if host and port.isdigit() and int(port) < 65536:
            return Address("tcp", host=host, port=int(port))
    raise RpcError(f"{text!r} is not an address: use unix:PATH or tcp:HOST:PORT", address=text)


# --- socket client ------------------------------------------------------------------


class SocketCarrier:
    def __init__(
        self, address: Address | str, limit: int = MAX_MESSAGE, reply_limit: int = MAX_REPLY
    ) -> None:
        """`limit`: the largest request sent; `reply_limit`: the largest message read."""
        self.address = parse_address(address) if isinstance(address, str) else address
        self.limit = limit
        self.reply_limit = reply_limit
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None

    async def start(self, receive: Receive, closed: Closed) -> None:
        a = self.address
        try:
            if a.kind == "unix":
                reader, writer = await asyncio.open_unix_connection(a.path, limit=self.reply_limit)
            else:
                reader, writer = await asyncio.open_connection(
                    a.host, a.port, limit=self.reply_limit
                )
        except OSError as exc:
            raise HostUnavailable(f"no Forkwise host at {a}: {exc}", address=str(a)) from exc
        self._writer = writer
        self._reader_task = asyncio.get_running_loop().create_task(
            self._read(reader, receive, closed)
        )

    async def _read(self, reader: asyncio.StreamReader, receive: Receive, closed: Closed) -> None:
        error: BaseException | None = None
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                message = decode(line)
                if isinstance(message, dict):
                    receive(message)
        except (ValueError, OSError) as exc:  # oversized line, bad JSON, reset connection
            error = exc
        finally:
            closed(error)

    async def send(self, message: Json) -> None:
        data = encode(message)
        if len(data) >= self.limit:
            raise RpcError(f"the request is larger than {self.limit} bytes", size=len(data))
        if self._writer is None or self._writer.is_closing():
            raise HostUnavailable(f"the connection to {self.address} is closed")
        self._writer.write(data + b"\n")
        try:
            await self._writer.drain()
        except OSError as exc:
            raise HostUnavailable(f"the connection to {self.address} broke: {exc}") from exc

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader_task


# --- socket server ------------------------------------------------------------------


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
