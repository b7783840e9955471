"""A host follows its store's disk: sessions other programs add, append to, rewrite or
delete show up in the tree, the open transcript and the index within about a second.

The store watcher (`store/watcher.py`) reports which session files changed; for each, the
store is brought in line with the file on the host's store worker (`SessionStore.
follow_disk`, which tells the host's own writes apart), and clients hear of it through the
usual notifications: `catalogue/upsert`, `catalogue/remove`, `session/events` (and, for a
file rewritten other than by appending, `session/truncate` to 0 followed by every event).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from forkwise.core.errors import ForkwiseError
from forkwise.core.notifications import (
    CATALOGUE_REMOVE,
    CATALOGUE_UPSERT,
    SESSION_EVENTS,
    SESSION_TRUNCATE,
    Notification,
)
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import DiskChange, SessionStore
from forkwise.core.store.watcher import POLL, Changes, StoreWatcher

log = logging.getLogger(__name__)
Json = dict[str, Any]
T = TypeVar("T")


class Host(Protocol):
    """What following the disk needs of the host (host.py's Host)."""

    store: SessionStore

    async def io(self, fn: Callable[..., T], *args: Any) -> T: ...
    def row(self, summary: SessionSummary) -> Json: ...
    def disk_changed(self, change: DiskChange, notes: Sequence[Notification]) -> None: ...


class DiskFollower:
    """Watches `host`'s store folder and applies what changed; `close` stops it."""

    def __init__(self, host: Host, *, poll: float = POLL) -> None:
        self.host = host
        self.loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Changes] = asyncio.Queue()
        sessions_dir = getattr(host.store.backend, "sessions_dir", None)  # JSONL stores only
        self.watcher = (
            StoreWatcher(sessions_dir, self._from_thread, poll=poll).start()
            if sessions_dir is not None
            else None
        )
        self._worker = self.loop.create_task(self._apply_in_order())

    def _from_thread(self, changes: Changes) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._queue.put_nowait, changes)

    async def _apply_in_order(self) -> None:
        while True:
            changes = await self._queue.get()
            try:
                await self.apply(changes)
            except Exception:
                log.exception("following the store's disk failed")

    async def apply(self, changes: Changes) -> None:
        host = self.host
        for sid in sorted(changes.added | changes.changed | changes.removed):
            present = sid not in changes.removed
            try:
                change = await host.io(host.store.follow_disk, sid, present)
            except ForkwiseError as exc:
                log.info("session %s changed on disk and cannot be read: %s", sid, exc)
                continue
            if change is not None:
                host.disk_changed(change, self._notes(change))

    def _notes(self, change: DiskChange) -> list[Notification]:
        sid = change.session_id
        if change.kind == "removed":
            return [{"kind": CATALOGUE_REMOVE, "sessionId": sid}]
        notes: list[Notification] = []
        if change.kind == "appended" and change.events:
            events = [e.to_record() for e in change.events]
            notes.append({"kind": SESSION_EVENTS, "sessionId": sid, "events": events})
        elif change.kind == "replaced":
            notes.append(
                {"kind": SESSION_TRUNCATE, "sessionId": sid, "variant": "session",
                 "type": "truncate", "through_sequence": 0}
            )  # fmt: skip
            events = [e.to_record() for e in self.host.store.get(sid).events]
            notes.append({"kind": SESSION_EVENTS, "sessionId": sid, "events": events})
        if change.summary is not None:
            notes.append({"kind": CATALOGUE_UPSERT, "summary": self.host.row(change.summary)})
        return notes

    async def close(self) -> None:
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        if self.watcher is not None:
            await asyncio.to_thread(self.watcher.stop)
