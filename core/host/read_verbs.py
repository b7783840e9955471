"""The host's read verbs: list, show, messages, the model's context, events, search. A
part of Host (a base class of it): what a client reads, served from the store worker and
the replay checkpoints; nothing here writes to a session except the crash recovery that
serving a session does (`Host._serve`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from forkwise.core.errors import ForkwiseError, InvalidBoundary
from forkwise.core.notifications import StoreIndexing
from forkwise.core.runtime.fresh_notes import fresh_rows
from forkwise.core.runtime.listing import summary_row
from forkwise.core.runtime.providers.offline import model_select_draft

if TYPE_CHECKING:  # what Host gives its parts
    import threading
    from pathlib import Path

    from forkwise.core.log.events import Event
    from forkwise.core.log.replay import Replay
    from forkwise.core.notifications import Notification
    from forkwise.core.runtime.agent import Agent
    from forkwise.core.runtime.providers.base import ModelChoice
    from forkwise.core.store.replay_cache import ReplayCache
    from forkwise.core.store.search_index import SearchIndex
    from forkwise.core.store.session import Session, SessionSummary
    from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]
T = TypeVar("T")
MAX_PAGE = 1000
#: the most bytes of messages one `session.context` page holds (a socket message is at
#: most 16 MB; the context of a 100,000-event session is ~40 MB)
MAX_CONTEXT_PAGE = 4 * 1024 * 1024


def source_file(meta: object) -> Json | None:
    """{"path", "present"} of the file an imported session came from (an agent may have
    deleted it since: the copy in the store stays), else None."""
    import os

    from forkwise.core.formats.base import SourceRef

    ref = SourceRef.from_meta(meta)
    if ref is None:
        return None
    return {"path": ref.path, "present": os.path.lexists(ref.path)}


def _file_gone(meta: object) -> bool:
    """The file an imported session came from is no longer on this machine."""
    origin = source_file(meta)
    return origin is not None and not origin["present"]


class ReadVerbs:
    """Reads of sessions and of the store, for every client alike."""

    if TYPE_CHECKING:  # what Host gives its parts
        store: SessionStore
        replays: ReplayCache
        orphaned: bool
        _agents: dict[str, Agent]
        _served: set[str]
        _listeners: Sequence[object]
        _default_model: ModelChoice
        _context_kept: tuple[tuple[str, str, int], Replay] | None

        _made: threading.Lock
        _search: SearchIndex | None
        _search_path: Path | None
        _unsubscribe_search: Callable[[], None] | None

        @property
        def read_only(self) -> bool: ...
        def row(self, summary: SessionSummary) -> Json: ...
        async def add_usage(
            self, rows: list[Json], summaries: Sequence[SessionSummary]
        ) -> list[Json]: ...
        def notify(self, note: Notification) -> None: ...
        async def io(self, fn: Callable[..., T], *args: Any) -> T: ...
        async def _serve(self, session_id: str) -> Session: ...

    def _left_by_crash(self, session_ids: Sequence[str]) -> set[str]:
        """Of sessions whose log ends inside a turn, those no live host is running: every
        one on a store nobody writes; on a store several hosts write (a database), each
        one whose writer is gone. The same rows, `interrupted`, from every backend."""
        if self.read_only and self.orphaned:
            return set(session_ids)
        return self.store.unheld(session_ids) or set()

    @property
    def search_index(self) -> SearchIndex:
        """The full-text index, made on first use (a search, any thread): until its first
        `sync` an index applies no change, so one made late misses nothing, and a command
        that searches nothing does not import it."""
        with self._made:
            if self._search is None:
                from forkwise.core.store.search_index import SearchIndex

                self._search = SearchIndex(self._search_path)
                self._unsubscribe_search = self._search.attach(self.store)
            return self._search

    async def list_sessions(self, usage: bool = False) -> list[Json]:
        """The catalogue's rows; with `usage`, each row's own tokens and cost as well
        (`UsageVerbs.add_usage`: as the summaries keep them, no log read)."""
        summaries = await self.io(self.store.list, self._indexing_progress())
        # A turn a crash left open is closed (interrupted) when the host first serves its
        # session. Listing serves the sessions whose log ends inside a turn, so that none
        # of them shows as running while nothing runs it; a turn waiting for an approval
        # stays open. Only those few logs are loaded.
        dangling = [
            s.id
            for s in summaries
            if s.running and s.error is None and s.id not in self._served and not self.read_only
        ]
        if dangling:
            for sid in dangling:
                await self._serve(sid)
            fresh = {sid: await self.io(self.store.summary, sid) for sid in dangling}
            summaries = [fresh.get(s.id, s) for s in summaries]
        # `row` of each, without the method's call per row (~0.3 ms of 10,000)
        default = self._default_model
        rows = [summary_row(s, default) for s in summaries]
        await self.shown_states(rows)
        if usage:
            rows = await self.add_usage(rows, summaries)
        return fresh_rows(rows)  # made for this reply: a client may take them uncopied

    async def shown_states(self, rows: Sequence[Json]) -> None:
        """Rows that show a turn running which nothing will end show it `interrupted`
        (not running): a turn a crash left (`_left_by_crash`), and an agent's turn in an
        imported session whose file the agent deleted (it writes that turn no more). A
        turn waiting for an approval stays open. Nothing is written: the copy of an
        agent's session stays as its file was. The listing and the rows told when an
        agent's file goes use this one rule."""
        running = {r["id"]: r for r in rows if r.get("running") and r.get("error") is None}
        if not running:
            return
        imported = {sid for sid, r in running.items() if r.get("source")}
        for sid in await self.io(self._ended_turns, list(running), imported):
            running[sid].update(running=False, interrupted=True)

    def _ended_turns(self, session_ids: Sequence[str], imported: set[str]) -> list[str]:
        """Of `session_ids` (their logs end inside a turn), those whose turn nothing will
        end (`shown_states`); on the store worker."""
        left = self._left_by_crash(session_ids)
        candidates = sorted(left | imported)
        if not candidates:
            return []
        # imported for a row that shows a turn running: most listings have none
        from forkwise.core.runtime.turn_state import OpenTurn

        ended: list[str] = []
        for sid in candidates:
            snap = self.store.get(sid)
            turn = OpenTurn.of(snap)
            if turn is None or turn.pending:
                continue
            if sid in left or (turn.agent and _file_gone(snap.header.meta.get("source"))):
                ended.append(sid)
        return ended

    def _indexing_progress(self) -> Callable[[int, int], None] | None:
        """Progress of a listing that reads logs (no index yet), as `store/indexing`
        notifications, about a hundred per listing; None when nobody listens."""
        if not self._listeners:
            return None
        loop = asyncio.get_running_loop()
        told = [0]

        def progress(done: int, total: int) -> None:  # on the store worker
            if done == total or done - told[0] >= max(1, total // 100):
                told[0] = done
                note: StoreIndexing = {"kind": "store/indexing", "done": done, "total": total}
                loop.call_soon_threadsafe(self.notify, note)

        return progress

    async def get_session(self, session_id: str) -> Json:
        # imported by the verbs that use them (as `paging` by `context`): not by a listing
        from forkwise.core.host.lineage import source_state
        from forkwise.core.runtime.turn_state import OpenTurn, latest_choice

        snap = await self._serve(session_id)
        summary = await self.io(self.store.summary, session_id)
        turn = OpenTurn.of(snap)
        agent = self._agents.get(session_id)
        state = (
            agent.state()
            if agent is not None
            else {"running": turn is not None, "queued": 0, "waiting": bool(turn and turn.pending)}
        )
        crashed: set[str] = set()
        if agent is None and turn is not None and not turn.pending:
            crashed = await self.io(self._left_by_crash, [session_id])
        if crashed:
            state = {**state, "running": False, "interrupted": True}  # no writer: a crash's
        choice = latest_choice(snap) or self._default_model
        source = await self.io(source_state, self.store, snap)
        origin = await self.io(source_file, snap.header.meta.get("source"))
        return {
            "header": snap.header.to_record(),
            "summary": self.row(summary),
            "state": state,
            "pendingApprovals": [r.to_dict() for r in turn.pending.values()] if turn else [],
            "model": {k: v for k, v in model_select_draft(choice).items() if k != "type"},
            # a fork's child: whether its source still starts with what it copied
            "source": source,
            # an imported session's file: whether it is still on this machine
            "sourceFile": origin,
        }

    async def messages(self, session_id: str) -> list[Json]:
        snap = await self._serve(session_id)
        replayer = await self.io(self.replays.replayer, snap)
        return [m.to_dict() for m in replayer.messages]

    async def context(
        self, session_id: str, after: int = 0, max_bytes: int = MAX_CONTEXT_PAGE
    ) -> Json:
        """What the model would receive on the next prompt: the provider transcript of the
        session's log (chat messages with role, content, tool calls and their ids) and the
        model it would go to; a page of it, messages `after`.. up to about `max_bytes` (at
        least one message). Replayed on the store worker; the replay is kept for the next
        page while the session is unchanged (`lastSeq` says which state a page is of)."""
        for name, value in (("after", after), ("maxBytes", max_bytes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidBoundary(f"{name} must be a non-negative integer", **{name: value})
        snap = await self._serve(session_id)
        key = (session_id, snap.generation, snap.last_seq)
        kept = self._context_kept
        if kept is not None and kept[0] == key:
            replayed = kept[1]
        else:
            replayed = (await self.io(self.replays.replayer, snap)).result()
            self._context_kept = (key, replayed)
        transcript = replayed.transcript
        from forkwise.core.host.paging import page_end

        end = page_end(transcript, after, min(max_bytes, MAX_CONTEXT_PAGE))
        from forkwise.core.runtime.turn_state import choice_of

        choice = choice_of(replayed.model) or self._default_model
        return {
            "sessionId": session_id,
            "model": {k: v for k, v in model_select_draft(choice).items() if k != "type"},
            "messages": list(transcript[after:end]),
            "lastSeq": snap.last_seq,
            "more": end < len(transcript),
        }

    async def events(self, session_id: str, after: int = 0, limit: int = MAX_PAGE) -> Json:
        for name, value in (("after", after), ("limit", limit)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidBoundary(f"{name} must be a non-negative integer", **{name: value})
        await self._serve(session_id)
        size = max(1, min(limit, MAX_PAGE))

        def page_of() -> tuple[tuple[Event, ...], int]:
            return self.store.events_since(session_id, after, size), self.store.last_seq(session_id)

        page, last = await self.io(page_of)
        return {
            "events": [e.to_record() for e in page],
            "lastSeq": max(last, after),
            "more": after + len(page) < last,
        }

    async def search(self, query: str, limit: int = 50) -> list[Json]:
        """Events of every session whose text (message text, tool calls, titles) has every
        word of `query` (`SearchIndex.search`: the last word whole first, then as a
        prefix; the latest first in each): session id and title, seq, message id, time,
        kind and a snippet with the words between « and »."""
        from forkwise.core.store.search_index import check_query

        check_query(query)  # before anything waits on the index for it

        def search() -> list[Json]:
            index = self.search_index
            if not index.ready:
                index.sync(self.store)  # the first search: catch up from the logs
            out: list[Json] = []
            for hit in index.search(query, limit):
                try:
                    summary = self.store.summary(hit.session_id)
                except ForkwiseError:
                    continue  # gone since it was indexed
                out.append({
                    "sessionId": hit.session_id,
                    "title": summary.display_title,
                    "seq": hit.seq,
                    "messageId": hit.message_id,
                    "ts": hit.ts,
                    "kind": hit.kind,
                    "snippet": hit.snippet,
                })
            return out

        # beside the store worker: a first search that reads every log holds no writer up
        return await asyncio.to_thread(search)
