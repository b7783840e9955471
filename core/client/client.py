"""The Python client: `ClientAPI` over either carrier, and the seed-002 `Session` object.

    client = await Client.in_process(host)          # or: await Client.connect("unix:/…")
    session = client.session(session_id)
    await session.prompt("hello")
    child = await session.fork()                    # last completed turn
    child = await session.fork("assistant:…:1a2b")  # through that message's turn
    same = await session.fork(message_id=m, include_message=False, replace=True)

The client keeps `catalogue` (id → summary) current from the host's notifications. A fork
whose child was published but could not join the workspace raises `WorkspaceAttachFailed`
only after `_reconcile` has put the child into the catalogue (and told subscribers).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from typing import Any

from forkwise.core.client.api import (
    CATALOGUE_REMOVE,
    CATALOGUE_UPSERT,
    Json,
    Notification,
    Unsubscribe,
)
from forkwise.core.errors import (
    ForkwiseError,
    HostUnavailable,
    SessionBusy,
    WorkspaceAttachFailed,
    error_from_code,
)
from forkwise.core.host.carriers import Carrier, InProcessCarrier, SocketCarrier
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.notifications import received

log = logging.getLogger(__name__)
Callback = Callable[[Notification], None]


class Client:
    """Implements `forkwise.core.client.api.ClientAPI`."""

    def __init__(self, carrier: Carrier) -> None:
        self.carrier = carrier
        self.catalogue: dict[str, Json] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._callbacks: list[Callback] = []
        self._lost: BaseException | None = None

    @classmethod
    async def in_process(cls, host: Host, *, follow: bool = True, shared: bool = False) -> Client:
        """A client of a host in this process; `shared`: results are not copied (see
        InProcessCarrier), for a one-shot caller that writes them out and drops them."""
        carrier = InProcessCarrier(RpcServer(host), shared=shared)
        return await cls(carrier).start(follow=follow)

    @classmethod
    async def connect(
        cls, address: str, token: str | None = None, *, follow: bool = True
    ) -> Client:
        return await cls(SocketCarrier(address)).start(token, follow=follow)

    async def start(self, token: str | None = None, *, follow: bool = True) -> Client:
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

    # --- the wire ------------------------------------------------------------------

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

    async def _reconcile(self, error: WorkspaceAttachFailed) -> None:
        """The one reconcile step: the published child joins the catalogue first."""
        child = error.details.get("childId")
        if not isinstance(child, str):
            return
        with contextlib.suppress(ForkwiseError):
            summary = (await self.get_session(child))["summary"]
            known = self.catalogue.get(child) == summary
            self.catalogue[child] = summary
            if not known:
                self._notified({"kind": CATALOGUE_UPSERT, "summary": summary})

    # --- ClientAPI -----------------------------------------------------------------

    async def follow(self, *, catalogue: bool = True) -> list[Json]:
        """Receive the host's notifications from now on and load the catalogue (what a
        front end that shows the store does once; a one-shot command does neither, or
        only listens, for progress). A store whose index is being built reports
        `store/indexing` notifications meanwhile."""
        await self.call("session.subscribe")
        return await self.list_sessions() if catalogue else []

    async def settings(self) -> Json:
        """The host's provider settings: `{"kind", "base_url", "model", "reasoning_effort"}`
        and, for an endpoint, `"key"`: where its API key comes from (never the key);
        `"vendors"`: per vendor {"key", "keyNote", "baseUrl", "model", "configured"}."""
        result: Json = await self.call("settings.get")
        return result

    async def save_settings(self, values: Json, api_key: str = "") -> Json:
        """Save provider settings on the host (its settings file, the key in its keyring)
        and apply them; returns the new default `{"provider", "model", "reasoning"}`."""
        result: Json = await self.call("settings.save", {"values": values, "apiKey": api_key})
        return result

    async def save_vendor(self, vendor: str, values: Json, api_key: str = "") -> Json:
        """Save a vendor's `{"base_url", "model"}` (and a typed key, to the host's keyring)
        and apply them; returns the vendor's new state (never the key)."""
        result: Json = await self.call(
            "settings.saveVendor", {"vendor": vendor, "values": values, "apiKey": api_key}
        )
        return result

    async def clear_vendor_key(self, vendor: str) -> bool:
        """Forget the key the host's keyring holds for the vendor's endpoint."""
        return bool(await self.call("settings.clearKey", {"vendor": vendor}))

    async def list_vendor_models(
        self, vendor: str, base_url: str = "", api_key: str = ""
    ) -> list[str]:
        """The models the vendor's endpoint offers (its SDK's list-models call, made by
        the host), at `base_url` with `api_key` when given, else the saved ones."""
        params = {"vendor": vendor, "baseUrl": base_url, "apiKey": api_key}
        result: list[str] = await self.call("settings.listModels", params)
        return result

    async def list_sessions(self, usage: bool = False) -> list[Json]:
        """The session rows; with `usage`, each carries `usage.own` (its own tokens and
        cost, after its seed): the host reads the logs that changed since last asked."""
        rows: list[Json] = await self.call("session.list", {"usage": True} if usage else None)
        self.catalogue = {s["id"]: s for s in rows}
        return rows

    async def usage(self, session_id: str) -> Json:
        """A session's tokens and cost: {"own", "shared", "total", "byModel"}, each
        {"input", "output", "cacheRead", "cacheWrite", "reasoning", "cost"} (USD or null)."""
        result: Json = await self.call("session.usage", {"sessionId": session_id})
        return result

    async def get_session(self, session_id: str) -> Json:
        result: Json = await self.call("session.get", {"sessionId": session_id})
        return result

    async def events(self, session_id: str, after: int = 0, limit: int | None = None) -> list[Json]:
        """Events after `after`; all of them (page by page) when `limit` is None."""
        out: list[Json] = []
        while True:
            want = 1000 if limit is None else min(1000, limit - len(out))
            page = await self.call(
                "session.events", {"sessionId": session_id, "after": after, "limit": want}
            )
            out.extend(page["events"])
            after += len(page["events"])
            if not page["more"] or not page["events"] or (limit is not None and len(out) >= limit):
                return out

    async def messages(self, session_id: str) -> list[Json]:
        result: list[Json] = await self.call("session.messages", {"sessionId": session_id})
        return result

    async def context(self, session_id: str, page_bytes: int = 1 << 22) -> Json:
        """The provider transcript the model would receive on the next prompt, and its model,
        fetched page by page (a long session's is larger than one socket message); started
        over when the session changed between pages."""
        for _ in range(3):
            params: Json = {"sessionId": session_id, "after": 0, "maxBytes": page_bytes}
            page = await self.call("session.context", params)
            messages = list(page["messages"])
            while page["more"]:
                params["after"] = len(messages)
                nxt = await self.call("session.context", params)
                if nxt["lastSeq"] != page["lastSeq"]:
                    break
                page = nxt
                messages += page["messages"]
            else:
                return {
                    "sessionId": page["sessionId"],
                    "model": page["model"],
                    "messages": messages,
                }
        raise SessionBusy(f"session {session_id} kept changing while its context was read")

    async def create_session(
        self, title: str | None = None, cwd: str | None = None, session_id: str | None = None
    ) -> Json:
        summary: Json = await self.call(
            "session.create", {"title": title, "cwd": cwd, "sessionId": session_id}
        )
        self.catalogue[summary["id"]] = summary
        return summary

    async def delete_session(self, session_id: str) -> Json:
        result: Json = await self.call("session.delete", {"sessionId": session_id})
        self.catalogue.pop(session_id, None)
        return result

    async def restore_session(self, session_id: str) -> Json:
        """Undo a delete: the session back from the store's trash; its row."""
        row: Json = await self.call("session.restore", {"sessionId": session_id})
        self.catalogue[row["id"]] = row
        return row

    async def list_trash(self) -> list[Json]:
        """The deleted sessions the store keeps (its rows, each with `deletedAt`), the
        latest deleted first."""
        rows: list[Json] = await self.call("trash.list")
        return rows

    async def empty_trash(self, session_id: str | None = None) -> Json:
        """Delete one kept session (every one when None) for good: `{"removed": [ids]}`."""
        result: Json = await self.call("trash.empty", {"sessionId": session_id})
        return result

    async def search(self, query: str, limit: int = 50) -> list[Json]:
        """Full-text search over every session (`Host.search`): `[{sessionId, title, seq,
        messageId, ts, kind, snippet}]`, the latest first; matched words in « »."""
        hits: list[Json] = await self.call("session.search", {"query": query, "limit": limit})
        return hits

    async def import_files(self, paths: list[str], tool: str | None = None) -> Json:
        """`{"imported", "updated", "unchanged", "failed", "warnings", "unmapped"}`: files or
        folders (none: the tools' default folders), read by the host — so they name files
        on its machine; `tool`: claude, codex, pi, forkwise, or None to recognise each
        file. The host reports `import/progress` notifications to subscribers."""
        result: Json = await self.call("session.import", {"paths": paths, "tool": tool})
        return result

    async def sources(self) -> Json:
        """`{"sources": [{"tool", "folders", "found"}], "watching": [tool, …]}`: the agents
        whose session folders exist on the host's machine, and those it keeps up with."""
        result: Json = await self.call("sources.list")
        return result

    async def watch_sources(self, tools: list[str]) -> Json:
        """Keep up with these tools' session folders (new and grown sessions are imported
        within a couple of seconds); `[]` stops. Returns what `sources()` does, with
        `failed`: the files its first look could not import (`[{"path", "line", "error"}]`,
        as `import_files` reports them; tried again when they change) and `warnings`
        (`[{"path", "line", "code", "message"}]`: lines kept unread in the files it read)."""
        result: Json = await self.call("sources.watch", {"tools": tools})
        return result

    async def export_session(
        self, session_id: str, tool: str, out: str | None = None, assets: bool = False
    ) -> Json:
        """Write the session as a native session of `tool` (claude, codex, pi) on the
        host's machine: `{"tool", "path", "id", "resume"}`; or as a document (`tool`
        markdown, html): `{"format", "path", "assets"}` (`assets`: a Markdown document's
        images as files beside it)."""
        params: Json = {"sessionId": session_id, "tool": tool, "out": out}
        if assets:
            params["assets"] = True
        result: Json = await self.call("session.export", params)
        return result

    async def truncate(
        self, session_id: str, message_id: str, include_message: bool = True
    ) -> Json:
        """Replace in place at a message; the session's summary."""
        summary: Json = await self.call(
            "session.truncate",
            {"sessionId": session_id, "messageId": message_id, "includeMessage": include_message},
        )
        return summary

    async def prompt(self, session_id: str, text: str) -> Json:
        result: Json = await self.call("session.prompt", {"sessionId": session_id, "text": text})
        return result

    async def prompt_and_wait(self, session_id: str, text: str) -> Json:
        """Prompt, then return the outcome once the turn ends or waits for an approval:
        `{"turn", "status", "reply", "error", "approvals": [{approval, call, tool, args}]}`."""
        result = await self.call(
            "session.prompt", {"sessionId": session_id, "text": text, "wait": True}
        )
        outcome: Json = result["outcome"]
        return outcome

    async def cancel(self, session_id: str) -> None:
        await self.call("session.cancel", {"sessionId": session_id})

    async def approve(self, session_id: str, approval_id: str, approved: bool) -> None:
        await self.call(
            "session.approve",
            {"sessionId": session_id, "approvalId": approval_id, "approved": approved},
        )

    async def approve_and_wait(self, session_id: str, approval_id: str, approved: bool) -> Json:
        """Answer, then return the outcome once the turn ends or waits again."""
        outcome: Json = await self.call(
            "session.approve",
            {
                "sessionId": session_id,
                "approvalId": approval_id,
                "approved": approved,
                "wait": True,
            },
        )
        return outcome

    async def fork(self, session_id: str, at_seq: int | None = None) -> Json:
        return await self._fork("session.fork", {"sessionId": session_id, "atSeq": at_seq})

    async def fork_at_message(
        self, session_id: str, message_id: str, include_message: bool = True, replace: bool = False
    ) -> Json:
        params = {
            "sessionId": session_id,
            "messageId": message_id,
            "includeMessage": include_message,
            "replace": replace,
        }
        return await self._fork("session.forkAtMessage", params)

    async def fork_at(
        self,
        session_id: str,
        *,
        boundary: int | None = None,
        end: bool = False,
        at_seq: int | None = None,
        message_id: str | None = None,
        include_message: bool = True,
        child_id: str | None = None,
    ) -> Json:
        """Every way of choosing a fork point (`host.forking.ForkAt`); the child's summary."""
        params = {
            "sessionId": session_id,
            "boundary": boundary,
            "end": end,
            "atSeq": at_seq,
            "messageId": message_id,
            "includeMessage": include_message,
            "childId": child_id,
        }
        return await self._fork("session.forkAt", params)

    async def _fork(self, method: str, params: Json) -> Json:
        """A fork call: the child's row goes into the catalogue, and a child that was
        published but not attached is reconciled into it before the error is raised."""
        try:
            summary: Json = await self.call(method, params)
        except WorkspaceAttachFailed as exc:
            await self._reconcile(exc)
            raise
        self.catalogue[summary["id"]] = summary
        return summary

    async def set_model(
        self, session_id: str, provider: str, model: str, reasoning: str | None = None
    ) -> Json:
        summary: Json = await self.call(
            "session.setModel",
            {"sessionId": session_id, "provider": provider, "model": model, "reasoning": reasoning},
        )
        return summary

    async def rename_session(self, session_id: str, title: str | None) -> Json:
        """Give a session a title (a `session/title` event); None: take the title it was
        given away (it is named as before it had one). Its summary."""
        params: Json = {"sessionId": session_id, "title": title}
        if title is None:
            params = {"sessionId": session_id, "clear": True}
        summary: Json = await self.call("session.rename", params)
        self.catalogue[summary["id"]] = summary
        return summary

    async def reload_settings(self) -> Json:
        """Ask the host to read the provider settings again; returns the new default
        `{"provider", "model", "reasoning"}` for sessions created from now on."""
        result: Json = await self.call("host.reloadSettings")
        return result

    async def models(self) -> list[Json]:
        result: list[Json] = await self.call("model.list")
        return result

    async def workspaces(self) -> list[Json]:
        result: list[Json] = await self.call("workspace.list")
        return result

    async def attach(self, workspace: str, session_id: str) -> None:
        await self.call("workspace.attach", {"workspace": workspace, "sessionId": session_id})

    async def subscribe(self, callback: Callback) -> Unsubscribe:
        self._callbacks.append(callback)

        async def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    async def close(self) -> None:
        self._callbacks.clear()
        await self.carrier.close()

    def session(self, session_id: str) -> Session:
        return Session(self, session_id)


class Session:
    """A session as seed 002 describes it; the same for local and remote hosts."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.id = session_id

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    async def fork(
        self,
        message_id: str | None = None,
        *,
        include_message: bool = True,
        replace: bool = False,
    ) -> Session:
        """A new independent session (or, with `replace`, this one truncated in place)."""
        if message_id is None:
            if replace:
                return self  # without a message, replace changes nothing
            child = await self.client.fork(self.id)
            return Session(self.client, child["id"])
        summary = await self.client.fork_at_message(self.id, message_id, include_message, replace)
        return self if replace else Session(self.client, summary["id"])

    async def messages(self) -> list[Json]:
        return await self.client.messages(self.id)

    async def events(self, after: int = 0) -> list[Json]:
        return await self.client.events(self.id, after)

    async def summary(self) -> Json:
        return dict((await self.client.get_session(self.id))["summary"])

    async def prompt(self, text: str) -> Json:
        return await self.client.prompt(self.id, text)

    async def cancel(self) -> None:
        await self.client.cancel(self.id)

    async def subscribe(self, callback: Callback) -> Unsubscribe:
        """Notifications about this session only (its events, deltas, turns, truncation)."""

        def mine(note: Notification) -> None:
            if note["kind"] == CATALOGUE_UPSERT:
                owner = note["summary"].get("id")
            else:
                owner = note.get("sessionId")
            if owner == self.id:
                callback(note)

        return await self.client.subscribe(mine)
