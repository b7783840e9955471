"""A fake Chat Completions endpoint: a real HTTP/1.1 server on 127.0.0.1.

Each test scripts the reply (SSE chunks, an HTTP error, silence, a cut connection) and
reads back the requests the server received. Every connection handler is awaited when
the fixture closes, so nothing is left running or unclosed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

LIMIT = 5.0  # seconds any single server-side wait may take before the test fails


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
Event = dict[str, Any] | str


def sse(event: Event) -> bytes:
    """One server-sent event: a chunk dict as `data: {json}`, a str sent verbatim."""
    if isinstance(event, str):
        return event.encode()
    return b"data: " + orjson.dumps(event) + b"\n\n"


def chunk(content: str | None = None, *, finish: str | None = None, **delta: Any) -> dict[str, Any]:
    """A streamed chat.completion.chunk with one choice."""
    if content is not None:
        delta["content"] = content
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Server:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._handler: Handler = self._not_scripted
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self.port = 0
        self.hangups = 0  # connections the client closed while the server was waiting
        self._queue: list[Handler] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        await self.handlers_done()

    async def handlers_done(self) -> None:
        """Wait (bounded) until every connection handler has returned."""
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=LIMIT)
            for task in pending:
                task.cancel()
            assert not pending, "a connection handler did not finish"

    # -- scripted replies --------------------------------------------------------------

    def stream(
        self,
        events: Sequence[Event],
        *,
        done: bool = True,
        complete: bool = True,
        split: bool = False,
        stall: bool = False,
    ) -> Handler:
        """SSE over chunked encoding. `complete=False` drops the socket mid-body without the
        final chunk; `stall=True` stops sending (keeping the socket open) after the
        events; `split=True` cuts every event in two chunks."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            payloads = [sse(e) for e in events]
            if done:
                payloads.append(b"data: [DONE]\n\n")
            for payload in payloads:
                pieces = [payload[: len(payload) // 2], payload[len(payload) // 2 :]]
                for piece in pieces if split else [payload]:
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
            if stall:
                await self._until_client_leaves(reader)
                return
            if complete:
                writer.write(b"0\r\n\r\n")
                await writer.drain()

        self._handler = handler
        return handler

    def close_delimited(self, events: Sequence[Event]) -> Handler:
        """SSE without chunked encoding: the body ends when the server closes the socket."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
            )
            writer.write(b"".join(sse(e) for e in events))
            await writer.drain()

        self._handler = handler
        return handler

    def respond(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Handler:
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items()).encode()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(
                b"HTTP/1.1 %d Scripted\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                b"%sConnection: close\r\n\r\n%s"
                % (status, content_type.encode(), len(body), extra, body)
            )
            await writer.drain()

        self._handler = handler
        return handler

    def sequence(self, *handlers: Handler) -> None:
        """Answer the next requests with these replies in turn (made by the methods
        above), then with the last one."""
        self._queue = list(handlers[:-1])
        self._handler = handlers[-1]

    def hang(self) -> None:
        """Read the request, then say nothing until the client gives up."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._until_client_leaves(reader)

        self._handler = handler

    # -- plumbing ----------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            self.requests.append(await asyncio.wait_for(_read_request(reader), LIMIT))
            handler = self._queue.pop(0) if self._queue else self._handler
            await handler(reader, writer)
        except ConnectionError:
            pass  # the client hung up first; the test judges what it saw
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _until_client_leaves(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError):
            await asyncio.wait_for(reader.read(), LIMIT)
        self.hangups += 1

    @staticmethod
    async def _not_scripted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise AssertionError("the test did not script a reply")


async def _read_request(reader: asyncio.StreamReader) -> Request:
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method, path, headers, body)
