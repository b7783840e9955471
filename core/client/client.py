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

`Client` is made of parts: its wire (`wire.Wire`: requests, answers, notifications) and
its verbs by area (`session_verbs`, `source_verbs`, `settings_verbs`,
`trash_usage_verbs`), as the host's verbs are.
"""

from __future__ import annotations

from forkwise.core.client.api import CATALOGUE_UPSERT, Json, Notification, Unsubscribe
from forkwise.core.client.session_verbs import SessionVerbs
from forkwise.core.client.settings_verbs import SettingsVerbs
from forkwise.core.client.source_verbs import SourceVerbs
from forkwise.core.client.trash_usage_verbs import TrashUsageVerbs
from forkwise.core.client.wire import Callback, Wire
from forkwise.core.host.carriers import InProcessCarrier, SocketCarrier
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer

__all__ = ["Callback", "Client", "Session"]


class Client(Wire, SessionVerbs, SourceVerbs, SettingsVerbs, TrashUsageVerbs):
    """Implements `forkwise.core.client.api.ClientAPI`."""

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
