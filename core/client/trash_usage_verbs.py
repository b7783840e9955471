"""The client's trash and usage verbs: deleting a session to the store's trash,
restoring and emptying it, and a session's tokens and cost. A part of `Client` (a base
class of it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forkwise.core.client.api import Json


class TrashUsageVerbs:
    """The trash, and usage."""

    if TYPE_CHECKING:  # what Client gives its parts (its wire, `forkwise.core.client.wire`)
        catalogue: dict[str, Json]

        async def call(self, method: str, params: Json | None = None) -> Any: ...

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

    async def usage(self, session_id: str) -> Json:
        """A session's tokens and cost: {"own", "shared", "total", "byModel"}, each
        {"input", "output", "cacheRead", "cacheWrite", "reasoning", "cost"} (USD or null)."""
        result: Json = await self.call("session.usage", {"sessionId": session_id})
        return result
