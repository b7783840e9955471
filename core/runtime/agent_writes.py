"""An agent's reads and durable writes of its session's log: what `Agent` (agent.py)
stands on, a base class of it.

The agent decides everything from the log (agent.py), so it reads the log before every
step. Reading it is cheap: each write returns the snapshot right after it, and a read
reuses the latest snapshot while the host's `version` says nothing changed the session
since (`_read`). A write holds what the running step holds back (`held_drafts.py`) in front
of its own drafts, is started on the loop when the store can write at once and flushed and
committed on the store worker (`_write`, `_finish`), and tells the replay kept between
steps (`live_replay.py`) when what it folded ahead did not land where it expected.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, Protocol

from forkwise.core.log.events import Event
from forkwise.core.notifications import Notification
from forkwise.core.runtime.held_drafts import HeldDrafts, landed
from forkwise.core.runtime.live_replay import LiveReplay, ReplayRuntime
from forkwise.core.store.appending import StartedAppend
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore

log = logging.getLogger(__name__)
Json = dict[str, Any]


class WriteRuntime(ReplayRuntime, Protocol):
    """What an agent's reads and writes need from its host (a part of `agent.Runtime`;
    `store`, `replays` and `session_io`: see `ReplayRuntime`).

    `version(session_id)` is a value that changes whenever the store commits a change to
    the session and whenever store work fails; None when the host cannot tell. The agent
    reads it on the store worker right before it takes a snapshot, and on the loop before
    it uses that snapshot again instead of reading the log once more.
    """

    def version(self, session_id: str) -> object | None: ...
    def notify(self, note: Notification) -> None: ...


class AgentWrites:
    """One live session's reads and writes of its log. All methods run on the host's
    event loop."""

    def __init__(self, rt: WriteRuntime, session_id: str) -> None:
        self.rt = rt
        self.id = session_id
        #: the session's replay, kept between steps, and the replay checkpoint due
        self._replay = LiveReplay(rt, session_id)
        #: the latest snapshot the agent read or wrote, and the version it was taken at
        self._held: tuple[Session, object] | None = None
        #: the drafts that open the running step, until a write carries them
        self._opening = HeldDrafts()
        #: writes whose caller was cancelled, being finished (`_finish`)
        self._settling: set[asyncio.Task[None]] = set()

    async def written(self) -> None:
        """Once this returns, the log holds what the running step holds back (its turn's
        opening): a reader of the session sees the prompt once its step has started."""
        if self._opening.pending:
            await self._opening.written(self._write_opening)

    async def _read(self) -> Session:
        """The session as its log is now: the snapshot held from the agent's last store
        call while nothing changed the session since, else one read on the store worker.
        Drafts held back are written first."""
        if self._opening.pending:
            return await self._append([])
        held = self._held
        if held is not None and held[1] is not None and held[1] == self.rt.version(self.id):
            return held[0]
        self._held = None
        self._held = await self.rt.session_io(self.id, _snapshot, self.rt, self.id)
        return self._held[0]

    async def _append(self, drafts: list[Json]) -> Session:
        """Append drafts after those held back, in one write; returns the session as it is
        right after (same worker call)."""
        await self._opening.settle()
        opening, events = self._opening.take()
        self._opening.release(self.rt.notify)  # what the step streamed, before its write
        if not opening and not drafts:
            return await self._read()
        return await self._write([*opening, *drafts], events)

    async def _write_opening(self, drafts: list[Json], held: tuple[Event, ...]) -> Session:
        """Write held drafts on their own; then what the step streamed meanwhile goes out
        (after the opening, which the store announced before this resumes)."""
        try:
            return await self._write(drafts, held)
        finally:
            self._opening.release(self.rt.notify)

    async def _write(self, drafts: list[Json], held: tuple[Event, ...] = ()) -> Session:
        """One durable write: started on the loop when the store can write at once (the
        bytes into the page cache; no thread hand-over for it), else on the store worker.
        `held`: the events the replay folded for drafts of this write before it; when
        they did not land at those seqs, the log is replayed again."""
        self._held = None
        try:
            started = self.rt.store.start_append(self.id, drafts)
            if started is None:
                self._held = await self.rt.session_io(
                    self.id, _append_and_read, self.rt, self.id, drafts
                )
            else:
                self._held = await self._finish(started)
        except BaseException:
            if held:
                self._replay.forget()
            raise
        snap = self._held[0]
        if held and not landed(snap.events, held):
            self._replay.forget()
        return snap

    async def _finish(self, started: StartedAppend) -> tuple[Session, object]:
        """A write the loop started (`SessionStore.start_append`): flushed on the store
        worker, committed here (there when the store is busy), with the session's
        version as the commit left it. Cancelled meanwhile, the write is finished all the
        same (`settle_append`), so the session's write lock is freed and what is durable
        joins the log."""
        store = self.rt.store
        observe = functools.partial(self.rt.version, self.id)
        try:
            await self.rt.session_io(self.id, store.flush_append, started)
            done = store.commit_append(started, observe, wait=False)
            if done is None:
                done = await self.rt.session_io(self.id, _commit, store, started, observe)
        except asyncio.CancelledError:
            settling = asyncio.get_running_loop().create_task(
                self.rt.session_io(self.id, store.settle_append, started)
            )
            self._settling.add(settling)
            settling.add_done_callback(self._settled)
            raise
        return done

    def _settled(self, task: asyncio.Task[None]) -> None:
        self._settling.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("session %s: a cancelled write failed", self.id, exc_info=task.exception())


def _snapshot(rt: WriteRuntime, session_id: str) -> tuple[Session, object]:
    """On the store worker: the session and its version, read first (a change committed
    in between makes the version older than the snapshot, never newer)."""
    version = rt.version(session_id)
    return rt.store.get(session_id), version


def _append_and_read(
    rt: WriteRuntime, session_id: str, drafts: list[Json]
) -> tuple[Session, object]:
    rt.store.append(session_id, drafts)
    return _snapshot(rt, session_id)


def _commit(
    store: SessionStore, started: StartedAppend, observe: Callable[[], object]
) -> tuple[Session, object]:
    """On the store worker: commit a started write, waiting for the store lock."""
    done = store.commit_append(started, observe)
    assert done is not None  # None only when told not to wait
    return done
