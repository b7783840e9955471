"""The client's wire: JSON-RPC requests over a carrier (in-process or a socket), their
answers and errors, and the host's notifications, which keep the catalogue (id →
summary) current and go to subscribers. A part of `Client` (a base class of it); the
verbs are its other parts, by area (`*_verbs.py`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from forkwise.core.client.api import (
    CATALOGUE_REMOVE,
    CATALOGUE_UPSERT,
    Json,
    Notification,
    Unsubscribe,
)
from forkwise.core.errors import HostUnavailable, error_from_code
from forkwise.core.notifications import received

if TYPE_CHECKING:
    from typing import Self

    from forkwise.core.host.carriers import Carrier

log = logging.getLogger(__name__)
Callback = Callable[[Notification], None]


class Wire:
    """Requests, answers and notifications; the catalogue the notifications keep."""

    if TYPE_CHECKING:  # a verb of `SessionVerbs`
        async def follow(self, *, catalogue: bool = True) -> list[Json]: ...

    def __init__(self, carrier: Carrier) -> None:
        self.carrier = carrier
        self.catalogue: dict[str, Json] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._callbacks: list[Callback] = []
        self._lost: BaseException | None = None

    async def start(self, token: str | None = None, *, follow: bool = True) -> Self:
        """Say hello; with `follow` (a front end that shows the store) also subscribe and
        load the catalogue. A one-shot command (the CLI) does neither."""
        await self.carrier.start(self._receive, self._closed)
        try:
            await self.call("host.hello", {"token": token})
            if follow:
                await self.follow()
        except BaseException:
            await self.carrier.close()
            raise
        return self

    async def call(self, method: str, params: Json | None = None) -> Any:
        """One JSON-RPC request; a JSON-RPC error comes back as its typed ForkwiseError."""
        if self._lost is not None:
            raise HostUnavailable(f"the connection to the host is gone: {self._lost}")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: Json = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self.carrier.send(message)
            return await future
        finally:
            self._pending.pop(request_id, None)

    def _receive(self, message: Json) -> None:
        if "method" in message:
            params = message.get("params")
            note = received(params) if isinstance(params, dict) else None
            if note is not None:
                self._notified(note)
            else:
                log.warning("a notification of no known kind or shape: %.200r", params)
            return
        future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            if "error" in message:
                log.warning("host error without a request: %s", message["error"])
            return
        error = message.get("error")
        if error is None:
            future.set_result(message.get("result"))
            return
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        code = data.get("code") or "rpc-error"
        future.set_exception(
            error_from_code(str(code), str(error.get("message", "")), data.get("details"))
        )

    def _closed(self, error: BaseException | None) -> None:
        self._lost = error or HostUnavailable("the host closed the connection")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(HostUnavailable(f"the host connection was lost: {error}"))

    def _notified(self, note: Notification) -> None:
        if note["kind"] == CATALOGUE_UPSERT:
            summary = note["summary"]
            self.catalogue[summary["id"]] = summary
        elif note["kind"] == CATALOGUE_REMOVE:
            self.catalogue.pop(note["sessionId"], None)
        for callback in list(self._callbacks):
            try:
                callback(note)
            except Exception:
                log.exception("a client subscriber failed on %s", note["kind"])

    async def subscribe(self, callback: Callback) -> Unsubscribe:
        self._callbacks.append(callback)

        async def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    async def close(self) -> None:
        self._callbacks.clear()
        await self.carrier.close()
