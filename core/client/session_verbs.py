"""The client's session verbs: listing, reading, creating and renaming sessions, their
turns (prompt, cancel, approve, model) and forks. A part of `Client` (a base class of
it); each verb is one host RPC method (`forkwise.core.host.rpc`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from forkwise.core.client.api import CATALOGUE_UPSERT, Json, Notification
from forkwise.core.errors import ForkwiseError, SessionBusy, WorkspaceAttachFailed


class SessionVerbs:
    """Sessions, their turns and their forks."""

    if TYPE_CHECKING:  # what Client gives its parts (its wire, `forkwise.core.client.wire`)
        catalogue: dict[str, Json]

        async def call(self, method: str, params: Json | None = None) -> Any: ...

        def _notified(self, note: Notification) -> None: ...

    async def follow(self, *, catalogue: bool = True) -> list[Json]:
        """Receive the host's notifications from now on and load the catalogue (what a
        front end that shows the store does once; a one-shot command does neither, or
        only listens, for progress). A store whose index is being built reports
        `store/indexing` notifications meanwhile."""
        await self.call("session.subscribe")
        return await self.list_sessions() if catalogue else []

    async def list_sessions(self, usage: bool = False) -> list[Json]:
        """The session rows; with `usage`, each carries `usage.own` (its own tokens and
        cost, after its seed): the host reads the logs that changed since last asked."""
        rows: list[Json] = await self.call("session.list", {"usage": True} if usage else None)
        self.catalogue = {s["id"]: s for s in rows}
        return rows

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

    async def rename_session(self, session_id: str, title: str | None) -> Json:
        """Give a session a title (a `session/title` event); None: take the title it was
        given away (it is named as before it had one). Its summary."""
        params: Json = {"sessionId": session_id, "title": title}
        if title is None:
            params = {"sessionId": session_id, "clear": True}
        summary: Json = await self.call("session.rename", params)
        self.catalogue[summary["id"]] = summary
        return summary

    async def search(self, query: str, limit: int = 50) -> list[Json]:
        """Full-text search over every session (`Host.search`): `[{sessionId, title, seq,
        messageId, ts, kind, snippet}]`, the latest first; matched words in « »."""
        hits: list[Json] = await self.call("session.search", {"query": query, "limit": limit})
        return hits

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

    async def set_model(
        self, session_id: str, provider: str, model: str, reasoning: str | None = None
    ) -> Json:
        summary: Json = await self.call(
            "session.setModel",
            {"sessionId": session_id, "provider": provider, "model": model, "reasoning": reasoning},
        )
        return summary
