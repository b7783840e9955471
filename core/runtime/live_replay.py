"""The replay a live session's agent keeps between its steps, and the checkpoint it owes.

Every step needs the session's replay (the model-facing transcript, the model chosen, the
message ids taken) as of the log's last event. The agent keeps one and folds into it only
what is new (`up_to`). A new one — the first step, after a truncation, or after a write
that did not land what the replay had folded ahead of it (`forget`; see `held_drafts.py`)
— is made on the store worker, from the session's replay checkpoint when it has one
(store/replay_cache.py), so that a step does not replay the whole history on the event
loop.

A fresh replay of a long session that has no checkpoint yet (a just-imported one) finds
one due. It is written once the turn that needed the replay is over
(`write_checkpoint`, when the driver has nothing left to do): written first, it would
hold back the turn's first streamed words by about a tenth of a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from forkwise.core.log.replay import Replayer
from forkwise.core.store.replay_cache import Due, ReplayCache
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore

T = TypeVar("T")


class ReplayRuntime(Protocol):
    """What the replay needs of the agent's host (a part of `agent.Runtime`)."""

    store: SessionStore
    replays: ReplayCache

    async def session_io(self, session_id: str, fn: Callable[..., T], *args: Any) -> T: ...


class LiveReplay:
    """One live session's replay, brought up to each snapshot the agent reads, and the
    replay checkpoint due. Used on the host's event loop only."""

    def __init__(self, rt: ReplayRuntime, session_id: str) -> None:
        self._rt = rt
        self._id = session_id
        self._replayer: Replayer | None = None
        #: the generation of the log the replayer folded
        self._generation = ""
        #: a replay checkpoint due since the last fresh replay, written once idle
        self._due: Due | None = None

    async def up_to(self, snap: Session) -> Replayer:
        """The session's replay, brought up to `snap` by folding only what is new; a new
        one when there is none, or when `snap` is of another generation or shorter."""
        replayer = self._replayer
        if (
            replayer is None
            or self._generation != snap.generation
            or replayer.last_seq > snap.last_seq
        ):
            fresh, due = await self._rt.session_io(self._id, _fresh_replay, self._rt, snap)
            self._replayer = replayer = fresh
            self._generation = snap.generation
            self._due = due or self._due
        replayer.catch_up(snap.events)
        return replayer

    def forget(self) -> None:
        """Replay the log afresh at the next step: what this replay folded ahead of a write
        (held drafts) may not be what the log holds."""
        self._replayer = None

    async def write_checkpoint(self) -> None:
        """Write the replay checkpoint a fresh replay found due, if any (once idle)."""
        due, self._due = self._due, None
        if due is not None:
            await self._rt.session_io(self._id, self._rt.replays.write, due)


def _fresh_replay(rt: ReplayRuntime, snap: Session) -> tuple[Replayer, Due | None]:
    """On the store worker: the session's replay, from its checkpoint where it has one, and
    the checkpoint to write when one is due; the store takes the message ids it found, so
    the turn's first write does not gather them again."""
    replayer, due = rt.replays.fold(snap)
    rt.store.adopt_message_ids(snap, replayer.message_ids)
    return replayer, due
