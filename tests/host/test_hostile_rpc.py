"""Hostile and broken RPC input over a real unix socket and TCP on 127.0.0.1 (issue 7).

Every case gets a JSON-RPC error or a closed connection, and the host goes on serving: each
test ends with a working call from a fresh client. Floods are bounded in count and every
wait has a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcServer,
)
from forkwise.core.host.socket_server import SocketServer
from forkwise.core.runtime.providers.offline import OfflineProvider

from .conftest import TIMEOUT, TOKEN, GateProvider

LIMIT = 64 * 1024  # the message size limit these servers get
FLOOD_CONNECTIONS = 6
FLOOD_REQUESTS = 300  # per connection


@dataclass
class Served:
    host: Host
    server: SocketServer
    token: str | None
    gate: GateProvider
    store: Path

    @property
    def address(self) -> str:
        return str(self.server.address)

    async def open(self) -> Wire:
        a = self.server.address
        if a.kind == "unix":
            reader, writer = await asyncio.open_unix_connection(a.path, limit=1 << 24)
        else:
            reader, writer = await asyncio.open_connection(a.host, a.port, limit=1 << 24)
        wire = Wire(reader, writer)
        if self.token is not None:
            hello = await wire.call({"jsonrpc": "2.0", "id": 0, "method": "host.hello",
                                     "params": {"token": self.token}})
            assert "result" in hello
        return wire

    async def still_serving(self) -> None:
        """A fresh client connects and gets a real answer."""
        client = await asyncio.wait_for(Client.connect(self.address, self.token), TIMEOUT)
        try:
            created = await client.create_session("after the storm")
            rows = await asyncio.wait_for(client.list_sessions(), TIMEOUT)
            assert created["id"] in {r["id"] for r in rows}
        finally:
            await client.close()


class Wire:
    """A raw newline-delimited JSON connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def reply(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), TIMEOUT)
        assert line, "the host hung up instead of answering"
        message: dict[str, Any] = orjson.loads(line)
        return message

    async def call(self, request: dict[str, Any]) -> dict[str, Any]:
        await self.send(orjson.dumps(request) + b"\n")
        return await self.reply()

    async def closed_by_host(self) -> bool:
        """The host ended the connection: end of stream, or a reset (it closed with our
        unread bytes still in its buffer)."""
        try:
            return await asyncio.wait_for(self.reader.read(), TIMEOUT) == b""
        except ConnectionResetError:
            return True

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


@pytest_asyncio.fixture(params=["unix", "tcp"])
async def served(
    request: pytest.FixtureRequest, tmp_path: Path, sock_dir: Path
) -> AsyncIterator[Served]:
    gate = GateProvider()
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path),
                     providers={"offline": OfflineProvider(), "gate": gate})
    token = TOKEN if request.param == "tcp" else None
    rpc = RpcServer(host, token)
    address = f"unix:{sock_dir / 'h.sock'}" if request.param == "unix" else "tcp:127.0.0.1:0"
    server = await SocketServer.start(rpc, address, limit=LIMIT, max_connections=16)
    try:
        yield Served(host, server, token, gate, tmp_path / "store")
    finally:
        gate.release.set()
        await server.close()
        await rpc.close()
        await host.close()


def req(method: Any, params: Any = None, rid: Any = 1, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return message


# --- lines that are not requests ------------------------------------------------------

NOT_REQUESTS: list[tuple[bytes, int]] = [
    (b"{not json\n", PARSE_ERROR),
    (b"\xff\xfe{\"jsonrpc\": \"2.0\"}\n", PARSE_ERROR),  # invalid UTF-8
    (b"[" * 5000 + b"]" * 5000 + b"\n", PARSE_ERROR),  # deeper than any decoder allows
    (b'{"jsonrpc":"2.0","id":1,"method":"session.list","params":{"a":1e99999}}\n', PARSE_ERROR),
    (b"[1, 2, 3]\n", INVALID_REQUEST),
    (b'[{"jsonrpc":"2.0","id":1,"method":"session.list"}]\n', INVALID_REQUEST),  # no batches
    (b"42\n", INVALID_REQUEST),
    (b'"session.list"\n', INVALID_REQUEST),
    (b"null\n", INVALID_REQUEST),
    (b"true\n", INVALID_REQUEST),
    (b'{"id":1,"method":"session.list"}\n', INVALID_REQUEST),  # no "jsonrpc"
    (b'{"jsonrpc":"1.0","id":1,"method":"session.list"}\n', INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":1}\n', INVALID_REQUEST),  # no method
    (b'{"jsonrpc":"2.0","id":1,"method":7}\n', INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":1,"method":null}\n', INVALID_REQUEST),
]


@pytest.mark.asyncio
async def test_lines_that_are_not_requests_get_errors_and_the_line_stays_open(
    served: Served,
) -> None:
    wire = await served.open()
    try:
        for line, code in NOT_REQUESTS:
            await wire.send(line)
            reply = await wire.reply()
            assert reply["error"]["code"] == code, line[:60]
            assert reply["error"]["data"]["code"] == "rpc-error"
            assert "result" not in reply
        # the same connection still serves a real request
        ok = await wire.call(req("session.list", rid="after"))
        assert (ok["id"], ok["result"]) == ("after", [])
    finally:
        await wire.close()
    await served.still_serving()


# --- methods and parameters -----------------------------------------------------------

BAD_CALLS: list[tuple[dict[str, Any], int]] = [
    (req("session.nope"), METHOD_NOT_FOUND),
    (req("__init__"), METHOD_NOT_FOUND),
    (req("constructor"), METHOD_NOT_FOUND),
    (req(""), METHOD_NOT_FOUND),
    (req("session.list" + "x" * 1000), METHOD_NOT_FOUND),
    (req("session.get", [1, 2]), INVALID_PARAMS),  # params must be an object
    (req("session.get", "s"), INVALID_PARAMS),
    (req("session.get", {}), INVALID_PARAMS),  # missing
    (req("session.get", {"sessionId": None}), INVALID_PARAMS),
    (req("session.get", {"sessionId": 5}), INVALID_PARAMS),
    (req("session.get", {"sessionId": ["a"]}), INVALID_PARAMS),
    (req("session.get", {"sessionId": {"$ne": ""}}), INVALID_PARAMS),
    (req("session.events", {"sessionId": "a", "after": "0"}), INVALID_PARAMS),
    (req("session.events", {"sessionId": "a", "after": 1.5}), INVALID_PARAMS),
    (req("session.events", {"sessionId": "a", "limit": True}), INVALID_PARAMS),
    (req("session.prompt", {"sessionId": "a", "text": {"t": 1}}), INVALID_PARAMS),
    (req("session.prompt", {"sessionId": "a", "text": "x", "wait": "yes"}), INVALID_PARAMS),
    (req("session.approve", {"sessionId": "a", "approvalId": "p", "approved": 1}),
     INVALID_PARAMS),
    (req("session.fork", {"sessionId": "a", "atSeq": "3"}), INVALID_PARAMS),
    (req("session.fork", {"sessionId": "a", "atSeq": False}), INVALID_PARAMS),
    (req("session.forkAtMessage", {"sessionId": "a"}), INVALID_PARAMS),
    (req("session.setModel", {"sessionId": "a", "provider": "offline"}), INVALID_PARAMS),
    (req("workspace.attach", {"workspace": 3, "sessionId": "a"}), INVALID_PARAMS),
    (req("session.create", {"title": ["x"]}), INVALID_PARAMS),
]


@pytest.mark.asyncio
async def test_unknown_methods_and_wrong_params_are_errors_with_the_request_id(
    served: Served,
) -> None:
    wire = await served.open()
    try:
        for n, (request, code) in enumerate(BAD_CALLS, start=1):
            request["id"] = n
            reply = await wire.call(request)
            assert (reply["id"], reply["error"]["code"]) == (n, code), request
        # numbers that are valid JSON but nonsense for the method: typed app errors
        negative = await wire.call(req("session.events", {"sessionId": "a", "after": -1}))
        assert negative["error"]["data"]["code"] == "invalid-boundary"
        unknown = await wire.call(req("session.fork", {"sessionId": "nobody", "atSeq": 2**62}))
        assert unknown["error"]["data"]["code"] == "source-not-found"
        # an integer past 64 bits decodes as a float: a wrong type, not a huge boundary
        await wire.send(b'{"jsonrpc":"2.0","id":"big","method":"session.fork","params":'
                        b'{"sessionId":"a","atSeq":123456789012345678901234567890}}\n')
        big = await wire.reply()
        assert (big["id"], big["error"]["code"]) == ("big", INVALID_PARAMS)
        empty = await wire.call(req("session.prompt", {"sessionId": "a", "text": "   "}))
        assert empty["error"]["data"]["code"] == "invalid-boundary"
        # a notification (no id) that fails gets no answer; the next request does
        await wire.send(orjson.dumps({"jsonrpc": "2.0", "method": "session.get"}) + b"\n")
        ok = await wire.call(req("model.list", rid="next"))
        assert ok["id"] == "next"
    finally:
        await wire.close()
    await served.still_serving()


TRAVERSAL = [
    "../escape",
    "../../etc/passwd",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "..",
    ".",
    ".hidden",
    "",
    "a\x00b",
    "x" * 65,
    "x" * 10_000,
    "sess\n",
    "ünïcode",
]


@pytest.mark.asyncio
async def test_session_ids_from_the_network_are_validated(served: Served) -> None:
    wire = await served.open()
    methods = [
        ("session.get", {}),
        ("session.messages", {}),
        ("session.events", {}),
        ("session.prompt", {"text": "hi"}),
        ("session.cancel", {}),
        ("session.fork", {}),
        ("session.forkAtMessage", {"messageId": "user:x:1"}),
        ("session.setModel", {"provider": "offline", "model": "m"}),
        ("workspace.attach", {"workspace": "w"}),
    ]
    try:
        n = 0
        for bad in TRAVERSAL:
            for method, extra in methods:
                n += 1
                reply = await wire.call(req(method, {"sessionId": bad, **extra}, rid=n))
                assert reply["id"] == n
                assert reply["error"]["data"]["code"] == "invalid-session-id", (method, bad[:20])
    finally:
        await wire.close()
    names = sorted(p.name for p in served.store.rglob("*"))
    assert not any("escape" in name or "passwd" in name for name in names)
    assert not list(served.store.parent.glob("escape*"))
    await served.still_serving()


# --- size ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_an_oversized_message_is_refused_and_only_that_connection_closes(
    served: Served,
) -> None:
    bystander = await served.open()
    wire = await served.open()
    try:
        huge = orjson.dumps(req("session.create", {"title": "t" * (LIMIT * 4)})) + b"\n"
        wire.writer.write(huge)
        reply = await wire.reply()
        assert reply["error"]["code"] == INVALID_REQUEST
        assert "larger than" in reply["error"]["message"]
        assert await wire.closed_by_host()
        assert (await bystander.call(req("session.list")))["result"] == []  # nothing created
    finally:
        await wire.close()
        await bystander.close()
    await served.still_serving()


@pytest.mark.asyncio
async def test_a_message_just_under_the_limit_is_served(served: Served) -> None:
    wire = await served.open()
    try:
        line = orjson.dumps(req("session.create", {"title": ""}))
        pad = LIMIT - len(line) - 64
        reply = await wire.call(req("session.create", {"title": "t" * pad}))
        assert "result" in reply
    finally:
        await wire.close()


# --- floods and hang-ups ----------------------------------------------------------------


def _flood_lines(conn: int) -> tuple[bytes, dict[str, str]]:
    """FLOOD_REQUESTS pipelined lines: requests of several kinds and some garbage.
    Returns the bytes and, by request id, what kind of answer each must get."""
    lines: list[bytes] = []
    wanted: dict[str, str] = {}
    for i in range(FLOOD_REQUESTS):
        rid = f"{conn}-{i}"
        kind = i % 5
        if kind == 0:
            lines.append(orjson.dumps(req("session.list", rid=rid)))
            wanted[rid] = "result"
        elif kind == 1:
            lines.append(orjson.dumps(req("session.get", {"sessionId": f"none-{i}"}, rid=rid)))
            wanted[rid] = "source-not-found"
        elif kind == 2:
            lines.append(orjson.dumps(req(f"flood.{i}", rid=rid)))
            wanted[rid] = "rpc-error"
        elif kind == 3:
            lines.append(orjson.dumps(req("model.list", rid=rid)))
            wanted[rid] = "result"
        else:
            lines.append(b"{garbage " + rid.encode())  # answered with id null
    return b"\n".join(lines) + b"\n", wanted


@pytest.mark.asyncio
async def test_a_flood_from_several_connections_is_answered_in_full(served: Served) -> None:
    wires = [await served.open() for _ in range(FLOOD_CONNECTIONS)]
    try:
        floods = [_flood_lines(c) for c in range(FLOOD_CONNECTIONS)]

        async def one(wire: Wire, data: bytes, wanted: dict[str, str]) -> int:
            await wire.send(data)  # all at once, without reading in between
            got: dict[str, str] = {}
            garbage = 0
            for _ in range(FLOOD_REQUESTS):
                reply = await wire.reply()
                if reply["id"] is None:
                    assert reply["error"]["code"] == PARSE_ERROR
                    garbage += 1
                    continue
                assert reply["id"] not in got, "answered twice"
                got[reply["id"]] = "result" if "result" in reply else reply["error"]["data"]["code"]
            assert got == wanted
            assert garbage == FLOOD_REQUESTS // 5
            return len(got) + garbage

        answered = await asyncio.wait_for(
            asyncio.gather(*(one(w, d, x) for w, (d, x) in zip(wires, floods, strict=True))),
            TIMEOUT * 3,
        )
        assert sum(answered) == FLOOD_CONNECTIONS * FLOOD_REQUESTS
    finally:
        for wire in wires:
            await wire.close()
    await served.still_serving()


@pytest.mark.asyncio
async def test_clients_that_hang_up_mid_request_do_not_hurt_the_host(served: Served) -> None:
    # half a line, then gone
    wire = await served.open()
    await wire.send(b'{"jsonrpc":"2.0","id":1,"method":"session.li')
    await wire.close()
    # a burst of requests whose answers nobody reads
    wire = await served.open()
    await wire.send(b"".join(orjson.dumps(req("session.list", rid=i)) + b"\n" for i in range(200)))
    await wire.close()
    # a turn waited on (wait=true) by a client that disconnects while it runs
    client = await Client.connect(served.address, served.token)
    try:
        sid = (await client.create_session("held"))["id"]
        await client.set_model(sid, "gate", "held")
    finally:
        await client.close()
    wire = await served.open()
    await wire.send(orjson.dumps(req("session.prompt", {"sessionId": sid, "text": "q",
                                                        "wait": True})) + b"\n")
    await asyncio.wait_for(served.gate.started.wait(), TIMEOUT)
    await wire.close()  # gone while its request is in flight
    watcher = await Client.connect(served.address, served.token)
    try:
        done = asyncio.get_running_loop().create_future()
        idle = asyncio.get_running_loop().create_future()

        def on_note(note: dict[str, Any]) -> None:
            events = note.get("events") or []
            if any(e["type"] == "turn/end" for e in events) and not done.done():
                done.set_result(events)
            # the agent says it is idle once its driver is done, just after the turn/end
            if (done.done() and note.get("kind") == "session/turn" and note.get("sessionId") == sid
                    and note.get("running") is False and not idle.done()):
                idle.set_result(note)

        await watcher.subscribe(on_note)
        served.gate.release.set()
        ended = await asyncio.wait_for(done, TIMEOUT)
        assert [e["status"] for e in ended if e["type"] == "turn/end"] == ["completed"]
        await asyncio.wait_for(idle, TIMEOUT)
        info = await watcher.get_session(sid)
        assert info["state"]["running"] is False
    finally:
        await watcher.close()
    await served.still_serving()


@pytest.mark.asyncio
async def test_connection_limit_frees_slots_when_clients_leave(served: Served) -> None:
    wires = [await served.open() for _ in range(16)]
    try:
        a = served.server.address
        if a.kind == "unix":
            reader, writer = await asyncio.open_unix_connection(a.path)
        else:
            reader, writer = await asyncio.open_connection(a.host, a.port)
        refused = Wire(reader, writer)
        reply = await refused.reply()
        assert "too many connections" in reply["error"]["message"]
        assert await refused.closed_by_host()
        await refused.close()
        assert (await wires[0].call(req("session.list")))["result"] == []
    finally:
        for wire in wires:
            await wire.close()
    await served.still_serving()  # the slots came back


@pytest.mark.asyncio
async def test_one_connection_cannot_start_requests_without_end(
    tmp_path: Path, sock_dir: Path
) -> None:
    """Requests that wait (here: prompts that wait on a held-back model) fill the
    connection's slots; the host then stops reading from it until one finishes, and
    every request is still answered once the model lets go."""
    gate = GateProvider()
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path),
                     providers={"offline": OfflineProvider(), "gate": gate})
    rpc = RpcServer(host)
    server = await SocketServer.start(rpc, f"unix:{sock_dir / 'c.sock'}", max_in_flight=4)
    served = Served(host, server, None, gate, tmp_path / "store")
    wire = await served.open()
    try:
        sessions = []
        for i in range(12):
            made = await wire.call(req("session.create", {"title": f"s{i}"}, rid=f"c{i}"))
            sid = made["result"]["id"]
            await wire.call(req("session.setModel", {"sessionId": sid, "provider": "gate",
                                                     "model": "g"}, rid=f"m{i}"))
            sessions.append(sid)
        lines = [orjson.dumps(req("session.prompt", {"sessionId": s, "text": "hi", "wait": True},
                                  rid=f"p{i}")) + b"\n" for i, s in enumerate(sessions)]
        await wire.send(b"".join(lines))
        # the host reads only as many as it has slots for
        conn = next(iter(rpc.connections))
        await asyncio.wait_for(gate.started.wait(), TIMEOUT)
        for _ in range(50):  # bounded: let the loop run; no new requests may start
            await asyncio.sleep(0)
        assert conn.in_flight == 4
        gate.release.set()
        answered = {(await wire.reply())["id"] for _ in sessions}
        assert answered == {f"p{i}" for i in range(len(sessions))}
        await served.still_serving()
    finally:
        gate.release.set()
        await wire.close()
        await server.close()
        await rpc.close()
        await host.close()
