"""A listing's rows reach an in-process client without the carrier's round trip
(runtime/fresh_notes.py FreshRows, host/wire_codec.py `as_sent`): the client still gets
rows of its own, equal to what a socket client gets, and rows the wire would refuse or
change (text that is not UTF-8, a value of another type) are copied and checked as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from forkwise.core.client.client import Client
from forkwise.core.errors import InvalidText
from forkwise.core.host.carriers import InProcessCarrier
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcConnection, RpcServer
from forkwise.core.host.socket_server import SocketServer
from forkwise.core.runtime.fresh_notes import fresh_rows
from forkwise.core.runtime.listing import summary_row
from forkwise.core.store.session import SessionSummary

from .conftest import TIMEOUT

Json = dict[str, Any]


@pytest_asyncio.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    h = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    yield h
    await h.close()


async def carrier_of(host: Host) -> tuple[RpcConnection, list[Json]]:
    """An in-process carrier's host side, and what its client receives."""
    server = RpcServer(host)
    got: list[Json] = []
    await InProcessCarrier(server).start(got.append, lambda error: None)
    return next(iter(server.connections)), got


def reply(result: object) -> Json:
    return {"jsonrpc": "2.0", "id": 7, "result": result}


@pytest.mark.asyncio
async def test_a_listing_is_handed_over_once_then_copied(host: Host) -> None:
    for title in ("one", "two"):
        await host.create_session(title=title)
    rows = await host.list_sessions()
    conn, got = await carrier_of(host)

    conn.send(reply(rows))
    conn.send(reply(rows))  # the same rows again: taken already, so copied
    await asyncio.sleep(0)
    first, second = got[0]["result"], got[1]["result"]
    assert type(first) is list
    assert len(first) == 2
    assert all(a is b for a, b in zip(first, rows, strict=True))  # not copied
    assert second == first
    assert not any(a is b for a, b in zip(second, rows, strict=True))


@pytest.mark.asyncio
async def test_rows_the_wire_would_refuse_or_change_are_copied(host: Host) -> None:
    conn, got = await carrier_of(host)

    class Text(str):
        pass

    changed = fresh_rows([{"id": "a", "title": Text("a subclass")}])
    conn.send(reply(changed))
    await asyncio.sleep(0)
    assert got[0]["result"] == [{"id": "a", "title": "a subclass"}]
    assert type(got[0]["result"][0]["title"]) is str  # as off the wire
    assert got[0]["result"][0] is not changed[0]

    # a path with bytes that are not UTF-8 (a surrogate escape): refused as the copy
    # and a socket's encoding refuse it, naming the field
    with pytest.raises(InvalidText) as refused:
        conn.send(reply(fresh_rows([{"id": "b", "cwd": "/tmp/\udcff"}])))
    assert "cwd" in str(refused.value)
    with pytest.raises(InvalidText):
        conn.send(reply([{"id": "b", "cwd": "/tmp/\udcff"}]))


def test_a_row_holds_nothing_of_its_summary() -> None:
    error = {"code": "corrupt-log", "message": "bad", "data": {"lines": [3, 4]}}
    summary = SessionSummary(id="s", created="", cwd="/", error=error)
    row = summary_row(summary)
    row["error"]["data"]["lines"].append(5)
    assert summary.error == {"code": "corrupt-log", "message": "bad", "data": {"lines": [3, 4]}}


@pytest.mark.asyncio
async def test_in_process_and_socket_clients_list_alike_and_own_their_rows(
    host: Host, sock_dir: Path
) -> None:
    for title in ("one", "two", "three"):
        await host.create_session(title=title)
    server = await SocketServer.start(RpcServer(host), f"unix:{sock_dir / 'h.sock'}")
    local = await Client.in_process(host)
    remote = await Client.connect(f"unix:{sock_dir / 'h.sock'}")
    try:
        mine = await asyncio.wait_for(local.list_sessions(), TIMEOUT)
        theirs = await asyncio.wait_for(remote.list_sessions(), TIMEOUT)
        assert mine == theirs
        assert len(mine) == 3
        for row in mine:  # what one client does to its rows reaches no one else
            row["title"] = "scribbled"
            row["waitingTools"].append("scribbled")
        again = await asyncio.wait_for(local.list_sessions(), TIMEOUT)
        assert again == theirs == await asyncio.wait_for(remote.list_sessions(), TIMEOUT)
        assert {host.store.summary(r["id"]).display_title for r in again} == {
            "one",
            "two",
            "three",
        }
    finally:
        await local.close()
        await remote.close()
        await server.close()
