"""Host test set-up: a real JSONL store on disk, a real host, and a client over a carrier.

The `carrier` fixture runs a test over the in-process carrier, a unix socket and TCP on
127.0.0.1, so local and remote clients are held to the same behaviour.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.host.socket_server import SocketServer
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta

TOKEN = "test-token-1234"
TIMEOUT = 10.0
CARRIERS = ("inproc", "unix", "tcp")


@dataclass
class Env:
    host: Host
    client: Client
    store_dir: Path
    work: Path
    server: SocketServer | None

    def log_lines(self, session_id: str) -> list[dict[str, Any]]:
        path = self.store_dir / "sessions" / f"{session_id}.jsonl"
        return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]

    def events(self, session_id: str) -> list[dict[str, Any]]:
        return self.log_lines(session_id)[1:]


@asynccontextmanager
async def open_env(
    carrier: str, root: Path, sock_dir: Path, **host_options: Any
) -> AsyncIterator[Env]:
    store_dir, work = root / "store", root / "work"
    work.mkdir(parents=True, exist_ok=True)
    host = Host.open(store_dir, default_cwd=str(work), **host_options)
    rpc = RpcServer(host, token=TOKEN if carrier == "tcp" else None)
    server: SocketServer | None = None
    client: Client | None = None
    try:
        if carrier == "inproc":
            client = await Client.in_process(host)
        elif carrier == "unix":
            server = await SocketServer.start(rpc, f"unix:{sock_dir / 'host.sock'}")
            client = await Client.connect(str(server.address))
        else:
            # the carrier's framing and login, with the client treated as the host's user
            # (paths of the test's folders): remote confinement has its own suite,
            # tests/reliability/test_remote_client.py
            server = await SocketServer.start(rpc, "tcp:127.0.0.1:0", confine=False)
            client = await Client.connect(str(server.address), token=TOKEN)
        yield Env(host, client, store_dir, work, server)
    finally:
        if client is not None:
            await client.close()
        if server is not None:
            await server.close()
        await rpc.close()
        await host.close()


@pytest.fixture(params=CARRIERS)
def carrier(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short directory for sockets (unix socket paths are limited to ~100 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="fw-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest_asyncio.fixture
async def env(carrier: str, tmp_path: Path, sock_dir: Path) -> AsyncIterator[Env]:
    async with open_env(carrier, tmp_path, sock_dir) as e:
        yield e


class Recorder:
    """Collects notifications; `wait_for` awaits one that matches, with a timeout."""

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def __call__(self, note: dict[str, Any]) -> None:
        self.notes.append(note)
        self._changed.set()

    async def wait_for(
        self, wanted: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            seen = 0
            while True:
                for note in self.notes[seen:]:
                    if wanted(note):
                        return note
                seen = len(self.notes)
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), timeout)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [n for n in self.notes if n["kind"] == kind]


# --- logs written by hand -------------------------------------------------------------

TS = "2026-01-01T00:00:00.000Z"


class LogBuilder:
    """Builds event records with contiguous seq numbers, as a person would write them."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, etype: str, **fields: Any) -> int:
        self.records.append({"seq": len(self.records) + 1, "type": etype, "ts": TS, **fields})
        return len(self.records)

    def turn(self, tid: str, text: str, status: str | None = "completed") -> int:
        """A user message and a reply; returns the seq of the turn/end (or the last event)."""
        self.add("turn/start", turn=tid)
        self.add("message", id=f"user:{tid}:0001", role="user", turn=tid, parts=[_text(text)])
        last = self.add(
            "message",
            id=f"assistant:{tid}:0002",
            role="assistant",
            turn=tid,
            parts=[_text(f"reply to {text}")],
        )
        if status is not None:
            last = self.add("turn/end", turn=tid, status=status)
        return last

    def waiting_turn(self, tid: str, tool: str, args: Mapping[str, Any]) -> str:
        """An open turn whose tool call waits for an approval; returns the approval id."""
        self.add("turn/start", turn=tid)
        self.add("message", id=f"user:{tid}:0001", role="user", turn=tid, parts=[_text("use it")])
        self.add("step/start", turn=tid, step=f"step:{tid}", provider="offline", model="m")
        call = {"type": "tool_call", "id": f"call:{tid}", "name": tool, "args": dict(args)}
        self.add(
            "message",
            id=f"assistant:{tid}:0002",
            role="assistant",
            turn=tid,
            parts=[_text("Calling."), call],
        )
        approval = f"approval:{tid}"
        self.add(
            "approval/request",
            turn=tid,
            approval=approval,
            call=f"call:{tid}",
            tool=tool,
            args=dict(args),
        )
        return approval


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def write_log(
    store_dir: Path, session_id: str, records: Sequence[Mapping[str, Any]], cwd: str = ""
) -> Path:
    sessions = store_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 1,
        "id": session_id,
        "created": TS,
        "cwd": cwd,
        "parentSession": None,
        "seedLength": 0,
        "meta": {},
    }
    path = sessions / f"{session_id}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *records]))
    return path


class GateProvider:
    """A provider that streams one delta, then holds the step until `release` is set."""

    name = "gate"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.calls = 0

    async def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        self.calls += 1
        self.started.set()
        yield TextDelta("holding ")
        await self.release.wait()
        yield StepResult(text=f"released: {transcript[-1].get('content')}")


async def lineage_store(store: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """A store of three sessions (oldest, older, newest) and a fork of a fork beneath the
    middle one: their ids in that order and the rows the host listed, its index written
    at close."""
    from forkwise.core.client.local import open_store

    opened = await open_store(store, serve=False)
    try:
        client = opened.client
        ids = []
        for title in ("oldest", "older", "newest"):
            s = await client.create_session(title)
            await client.prompt_and_wait(s["id"], f"about {title}")
            ids.append(s["id"])
            await asyncio.sleep(0.01)  # distinct activity times
        fork = (await client.fork(ids[1]))["id"]  # the newest row, beneath "older"
        ids.append(fork)
        ids.append((await client.fork(fork))["id"])
        listed = await client.list_sessions()
    finally:
        await opened.close()
    return ids, listed
