"""Carriers: how JSON-RPC messages travel between a client and a host (the client side;
the host's listening end is `socket_server`, the messages' encoding `wire_codec`).

* in-process (the default): the client and the host share the event loop; messages pass
  through an orjson round trip, so they have exactly the shapes they would have on a wire
  (a turn's notes are made in those shapes and go to one client uncopied: FreshNote, and
  so do a listing's rows, once their text is checked as the wire would check it: FreshRows);
* socket: newline-delimited JSON over asyncio streams, on `unix:PATH` or `tcp:HOST:PORT`
  (see `socket_server` for what the host's end allows). Messages have a size limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from forkwise.core.errors import HostUnavailable, RpcError
from forkwise.core.host.rpc import RpcConnection, RpcServer
from forkwise.core.host.wire_codec import (
    MAX_MESSAGE,
    MAX_REPLY,
    as_sent,
    copied,
    decode,
    encode,
)
from forkwise.core.runtime.fresh_notes import take, take_rows

Json = dict[str, Any]
Receive = Callable[[Json], None]
Closed = Callable[[BaseException | None], None]


def _as_is(message: Json) -> Json:
    return message


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
