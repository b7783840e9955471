"""The Host: owns the store, the live agents, the workspaces; what every client talks to.

Store work runs off the event loop — the GUI's, under qasync — so that it never waits on a
disk (core/store_workers.py: host-wide work in order on one thread, each live session's
work in order on a small pool, so that turns in different sessions share flushes; an
agent's write is put into the page cache by the loop when that cannot wait, and only its
fsync goes to the pool: SessionStore.start_append). The store
announces each committed change on the thread that made it; the host turns it into client
notifications and hands them to the loop, in order, before the coroutine that caused the
change resumes.

The verbs live in parts of Host, one module each: read_verbs (list, show, context,
events, search), fork_verbs, source_verbs (import, export, watched folders),
settings_verbs; this module keeps what they share — serving a session, its live agent,
the store's notifications — and the verbs that create, prompt, rename and delete.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from forkwise.core.errors import (
    AgentOwnsTurn,
    ForkwiseError,
    InvalidBoundary,
    ProviderError,
    ReadOnlyStore,
    SessionBusy,
    WorkspaceAttachFailed,
)
from forkwise.core.host.fork_verbs import ForkVerbs
from forkwise.core.host.read_verbs import ReadVerbs
from forkwise.core.host.settings_verbs import SettingsVerbs
from forkwise.core.host.source_verbs import SourceVerbs
from forkwise.core.host.store_workers import StoreWorkers
from forkwise.core.host.usage_verbs import UsageVerbs
from forkwise.core.notifications import (
    CATALOGUE_UPSERT,
    SESSION_EVENTS,
    CatalogueUpsert,
    Notification,
    SessionEvents,
)
from forkwise.core.paths import database_state_dir, is_database_url
from forkwise.core.runtime.fresh_notes import fresh
from forkwise.core.runtime.listing import summary_row
from forkwise.core.runtime.providers.base import ModelChoice, Provider
from forkwise.core.runtime.providers.offline import (
    OfflineProvider,
    default_choice,
    model_select_draft,
)
from forkwise.core.runtime.workspaces import (
    FileWorkspaces,
    MemoryWorkspaces,
    ReadOnlyWorkspaces,
    Workspaces,
    check_workspace_name,
)
from forkwise.core.store.opening import open_backend
from forkwise.core.store.replay_cache import ReplayCache
from forkwise.core.store.session import (
    EventsAppended,
    Session,
    SessionCreated,
    SessionDisposed,
    SessionFlushed,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)
from forkwise.core.store.session_store import DiskChange, SessionStore

if TYPE_CHECKING:  # imported where used: a one-shot command that runs no turn, searches
    # nothing and reads no settings does not load them (python -X importtime)
    from forkwise.core.host.disk_follow import DiskFollower
    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.source_watch import SourceWatcher
    from forkwise.core.log.replay import Replay
    from forkwise.core.runtime.agent import Agent
    from forkwise.core.runtime.tools import Delegate, Tool
    from forkwise.core.store.search_index import SearchIndex

log = logging.getLogger(__name__)
T = TypeVar("T")
Json = dict[str, Any]
#: what a subscriber gets: a typed notification (core/notifications.py)
Listener = Callable[[Notification], None]
MAX_TITLE = 200


class Host(SettingsVerbs, SourceVerbs, ReadVerbs, ForkVerbs, UsageVerbs):
    def __init__(
        self,
        store: SessionStore | None = None,
        *,
        workspaces: Workspaces | None = None,
        providers: Mapping[str, Provider] | None = None,
        tools: Mapping[str, Tool] | None = None,
        default_cwd: str | None = None,
        default_model: ModelChoice | None = None,
        imports: ImportLedger | None = None,
        search: SearchIndex | None = None,
        search_path: Path | None = None,
        replays: ReplayCache | None = None,
        remote_root: Path | None = None,
    ) -> None:
        if store is None:  # a host of its own in memory (tests, demos); imported then
            from forkwise.core.store.backends.memory import MemoryBackend

            store = SessionStore(MemoryBackend())
        self.store = store
        #: the full-text index (`store/search_index.py`), or the file of the one made on
        #: first use (`search_index`), in memory when there is neither
        self._search: SearchIndex | None = search
        self._search_path = search_path
        self._made = threading.Lock()  # the index's and the ledger's, made on first use
        self._unsubscribe_search: Callable[[], None] | None = None
        #: what earlier imports read (`import_ledger.py`): one in memory, made on first
        #: use (`imports`), unless one is given
        self._imports = imports
        if imports is not None:
            imports.attach(store)
        #: replay checkpoints of long sessions (`store/replay_cache.py`), none unless given
        self.replays = replays if replays is not None else ReplayCache(None, writable=False)
        self._sources: SourceWatcher | None = None  # made when first asked (`sources`)
        self.workspaces: Workspaces = workspaces if workspaces is not None else MemoryWorkspaces()
        self.providers: dict[str, Provider] = dict(providers or {"offline": OfflineProvider()})
        self._tools: Mapping[str, Tool] | None = tools  # the built-in ones when None
        self.default_cwd = default_cwd if default_cwd is not None else os.getcwd()
        #: where sessions created by remote clients work (confinement.py); a temporary
        #: folder made when first needed when None
        self.remote_root = remote_root
        self._default_model = default_model or default_choice()
        self.workers = StoreWorkers()
        self._listeners: list[Listener] = []
        self._agents: dict[str, Agent] = {}
        #: the last context replayed, for its next page: ((id, generation, lastSeq), replay)
        self._context_kept: tuple[tuple[str, str, int], Replay] | None = None
        self._served: set[str] = set()
        #: changes the store announced per session (see version)
        self._changes: dict[str, int] = {}
        self._closed = False
        #: set when the host closes: an import running ends before its next file, so
        #: that closing does not wait for the rest of it (`import_sources`' `stop`)
        self._import_stop = threading.Event()
        self._follower: DiskFollower | None = None
        #: a read-only host on a store nobody writes to (no writer lock held): a turn
        #: open in it that waits for no approval was left by a crash, and shows as ended
        self.orphaned = False
        #: build the search index in the background after an import (`_search_soon`);
        #: off for the host of a one-shot command, whose process ends with the import
        #: (closing would wait for the build's first batch, and the next search builds it)
        self.index_after_import = True
        self._unsubscribe_store = self.store.subscribe(self._on_store)
        if search is not None:
            self._unsubscribe_search = search.attach(self.store)
        # a shared store (PostgreSQL) tells what other hosts change; a folder has no `watch`
        watch = getattr(self.store.backend, "watch", None)
        self._unwatch: Callable[[], None] | None = watch(self._on_remote) if watch else None

    @classmethod
    def open(
        cls, store_dir: str | os.PathLike[str], *, read_only: bool = False, **options: Any
    ) -> Host:
        """A host on the store in `store_dir`: a JSONL folder (it takes the writer lock, or
        with `read_only` reads it and changes no session, refreshing its caches only while
        no process holds the lock), or
        a `postgresql://` URL (one writer per session; this machine's workspaces and
        import ledger stay in a folder of the user data dir)."""
        store = SessionStore(open_backend(store_dir, writable=not read_only))
        database = isinstance(store_dir, str) and is_database_url(store_dir)
        if isinstance(store_dir, str) and database:
            root = database_state_dir(store_dir)
            root.mkdir(parents=True, exist_ok=True)
        else:
            root = Path(store_dir)
        workspaces = ReadOnlyWorkspaces if read_only else FileWorkspaces
        options.setdefault("workspaces", workspaces(root / "workspaces.json"))
        # a read-only host keeps its import ledger and search index in memory, made when
        # first used (`imports`, `search_index`); a writer's ledger is
        # read now, off the loop of the app that opens it
        if not read_only:
            from forkwise.core.host.import_ledger import ImportLedger

            options.setdefault("imports", ImportLedger(root / "imports.json"))
            options.setdefault("search_path", root / "search.sqlite")
        # a reader on a folder makes checkpoints while no process holds its writer lock
        lock = root / "writer.lock" if read_only and not database else None
        options.setdefault(
            "replays", ReplayCache(root / "replay", writable=not read_only, lock=lock)
        )
        from forkwise.core.host.confinement import REMOTE_WORKSPACES

        options.setdefault("remote_root", root / REMOTE_WORKSPACES)
        return cls(store, **options)

    @property
    def read_only(self) -> bool:
        return not self.store.backend.writable

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools a turn may call: the built-in ones unless others were given (made
        when a turn first needs them)."""
        if self._tools is None:
            from forkwise.core.runtime.tools import builtin_tools

            self._tools = builtin_tools()
        return self._tools

    @tools.setter
    def tools(self, tools: Mapping[str, Tool]) -> None:
        self._tools = tools

    # --- the runtime agents use ----------------------------------------------------

    async def io(self, fn: Callable[..., T], *args: Any) -> T:
        """Run store work on the single store worker, in submission order."""
        return await self.workers.io(fn, *args)

    async def session_io(self, session_id: str, fn: Callable[..., T], *args: Any) -> T:
        """Run store work of one live session: in submission order for that session, at
        the same time as other sessions' work. Changes that span sessions or the store
        (fork, truncate, list) go through `io`; the store's locks keep both consistent."""
        return await self.workers.session_io(session_id, fn, *args)

    def version(self, session_id: str) -> object | None:
        """Changes whenever the store commits a change to the session or store work fails
        (an agent re-reads the log then); None on a read-only host, whose store another
        process writes."""
        if self.read_only:
            return None
        return (self.workers.failures, self._changes.get(session_id, 0))

    def notify(self, note: Notification) -> None:
        for listener in list(self._listeners):
            try:
                listener(note)
            except Exception:
                log.exception("a host subscriber failed on %s", note.get("kind"))

    def provider(self, name: str) -> Provider:
        found = self.providers.get(name)
        if found is None:
            raise ProviderError(f"no provider {name!r} is configured on this host", provider=name)
        return found

    def default_choice(self) -> ModelChoice:
        return self._default_model

    @property
    def delegate(self) -> Delegate | None:
        return self.run_subagent

    def row(self, summary: SessionSummary) -> Json:
        """A catalogue row; `model` is the one the next turn uses (the host default when
        the log selects none)."""
        return summary_row(summary, self._default_model)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every notification (client_api vocabulary); returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # --- store changes → notifications ---------------------------------------------

    def _on_store(self, change: StoreEvent) -> None:
        """Runs on the store worker, right after the change was committed."""
        sid = change.session_id
        self._changes[sid] = self._changes.get(sid, 0) + 1
        if isinstance(change, SessionFlushed) or not self._listeners:
            return  # announced already, or nobody listens (a one-shot command)
        notes: list[Notification] = []
        if isinstance(change, EventsAppended):
            # the records as a reader of the lines gets them, in one decode: objects of
            # this note alone, so a client may take them without a copy (fresh_notes.py)
            events = orjson.loads(b"[" + b",".join(e.encode() for e in change.events) + b"]")
            appended: SessionEvents = {"kind": SESSION_EVENTS, "sessionId": sid, "events": events}
            notes.append(fresh(appended))
        elif isinstance(change, SessionTruncated):
            notes.append(
                {
                    "kind": "session/truncate",
                    "sessionId": sid,
                    "variant": "session",
                    "type": "truncate",
                    "through_sequence": change.through,
                }
            )
        if isinstance(change, SessionDisposed):
            notes.append({"kind": "catalogue/remove", "sessionId": sid})
        elif isinstance(change, EventsAppended | SessionTruncated | SessionCreated):
            row = self.row(self.store.summary(sid))
            # scalars only, but for the error's mapping (then copied as usual)
            upsert: CatalogueUpsert = {"kind": CATALOGUE_UPSERT, "summary": row}
            notes.append(fresh(upsert) if row["error"] is None else upsert)
        self.workers.post(self._deliver, notes)

    def _on_remote(self, note: Json) -> None:
        """Another host committed a change to the shared store (on the listening thread):
        forget this store's copy of the session and tell the clients, as for our own."""
        sid, kind = note.get("id"), note.get("kind")
        if not isinstance(sid, str):
            return
        self.store.forget(sid, replaced=kind in ("truncated", "deleted"))
        self._changes[sid] = self._changes.get(sid, 0) + 1
        if kind == "deleted":
            notes: list[Notification] = [{"kind": "catalogue/remove", "sessionId": sid}]
        else:
            try:
                raw = note.get("summary")
                summary = (
                    SessionSummary.from_index(raw)
                    if isinstance(raw, dict)
                    else self.store.summary(sid)
                )
            except (ForkwiseError, KeyError, TypeError):
                return  # gone again meanwhile: its removal follows
            notes = [{"kind": "catalogue/upsert", "summary": self.row(summary)}]
        self.workers.post(self._deliver, notes)

    async def follow_disk(self, poll: float | None = None) -> None:
        """Follow changes other programs make to the store's files (`disk_follow`), every
        `poll` seconds (the watcher's own period when None): the app and `forkwise host`
        do; a one-shot command has no need."""
        if self._follower is None and not self._closed:
            from forkwise.core.host.disk_follow import DiskFollower

            self._follower = (
                DiskFollower(self) if poll is None else DiskFollower(self, poll=poll)
            )

    def disk_changed(self, change: DiskChange, notes: Sequence[Notification]) -> None:
        """A session's file changed behind the store's back and the store followed it:
        agents re-read it (`version`), a deleted one's idle agent goes, clients are told."""
        sid = change.session_id
        self._changes[sid] = self._changes.get(sid, 0) + 1
        if change.kind == "removed":
            agent = self._agents.get(sid)
            if agent is None or not agent.busy:
                self._agents.pop(sid, None)
                self._served.discard(sid)
        self._deliver(notes)

    def _deliver(self, notes: Sequence[Notification]) -> None:
        for note in notes:
            self.notify(note)

    # --- serving sessions ----------------------------------------------------------

    async def _serve(self, session_id: str) -> Session:
        """The session's snapshot (recovered when this host first serves it), with what its
        running step holds back (`Agent.written`)."""
        if (agent := self._agents.get(session_id)) is not None:
            await agent.written()
        return await self.io(self._recover_sync, session_id)

    def _recover_sync(self, session_id: str) -> Session:
        snap = self.store.get(session_id)
        if session_id in self._served:
            return snap
        from forkwise.core.runtime.turn_state import OpenTurn

        turn = OpenTurn.of(snap)
        # an imported session's open turn is its agent's, still writing it: not a crash
        if turn is not None and not turn.pending and not turn.agent and not self.read_only:
            try:
                self.store.claim(session_id)
            except SessionBusy:  # another host on the database is running that turn
                return snap
            log.info("session %s: closing turn %s left open by a crash", session_id, turn.id)
            reason = "the host stopped while this turn was running"
            self.store.append(session_id, turn.end("interrupted", reason))
            snap = self.store.get(session_id)
        self._served.add(session_id)
        return snap

    def _check_writable(self) -> None:
        """Refuse work that would write before it starts (a turn must not start half)."""
        if self.read_only:
            raise ReadOnlyStore(
                "this store is open read-only (another Forkwise process is writing to it)"
            )

    async def _claim(self, session_id: str) -> None:
        """Become the session's writer before a turn runs on it: on a database several
        hosts share, a second host's prompt is `session-busy` at once, not a turn that
        fails to start (nor one queued behind the other host's open turn)."""
        if self.store.shared:
            await self.io(self.store.claim, session_id)

    async def agent(self, session_id: str) -> Agent:
        """The live agent of a session (created, after recovery, on first use)."""
        found = self._agents.get(session_id)
        if found is not None:
            return found
        snap = await self._serve(session_id)
        found = self._agents.get(session_id)  # another caller may have won the race
        if found is None:
            from forkwise.core.runtime.agent import Agent
            from forkwise.core.runtime.turn_state import OpenTurn

            found = Agent(self, session_id, turn_open=OpenTurn.of(snap) is not None)
            self._agents[session_id] = found
        return found

    def _publish(self, session_id: str) -> None:
        """A newly created session can run from now on: it is served (nothing to recover;
        its agent is made on first use, so a command that only forks or creates does not
        load the agent runtime)."""
        self._served.add(session_id)

    async def _attach_like(self, source: str | None, child: str) -> None:
        def attach() -> None:
            name = self.workspaces.workspace_of(source) if source else "default"
            try:
                self.workspaces.attach(name, child)
            except WorkspaceAttachFailed as exc:
                exc.details.setdefault("childId", child)
                raise
            except (ForkwiseError, OSError) as exc:
                raise WorkspaceAttachFailed(
                    f"session {child!r} was created but could not join workspace {name!r}: {exc}",
                    childId=child,
                    workspace=name,
                ) from exc

        await self.io(attach)

    # --- the client API (JSON in, JSON out) ----------------------------------------

    async def create_session(
        self,
        title: str | None = None,
        cwd: str | None = None,
        workspace: str | None = None,
        session_id: str | None = None,
    ) -> Json:
        """A new empty session (with `session_id`, or a new id) on this host's default model;
        the title, when given, is its first `session/title` event."""
        self._check_writable()
        if workspace is not None:
            check_workspace_name(workspace)  # refused before anything is written
        follow: list[Json] = [model_select_draft(self._default_model)]
        if title:
            follow.append({"type": "session/title", "title": title})
        # header, model and title are one atomic write (the store's create); the workspace
        # comes after it, and a session that cannot join its workspace is taken back
        snap = await self.io(
            functools.partial(
                self.store.create, session_id, cwd=cwd or self.default_cwd, follow=follow
            )
        )
        self._publish(snap.id)
        try:
            if workspace is None:
                await self._attach_like(None, snap.id)
            else:
                await self.attach(workspace, snap.id)
        except BaseException:
            await self._take_back(snap.id)
            raise
        return self.row(await self.io(self.store.summary, snap.id))

    async def create_remote_session(
        self, title: str | None = None, workspace: str | None = None, session_id: str | None = None
    ) -> Json:
        """`create_session` for a client connected over the network: it works in a new
        folder of its own (confinement.py), never in one of the host user's."""
        from forkwise.core.host.confinement import make_workspace

        self._check_writable()
        if self.remote_root is None:
            import tempfile

            self.remote_root = Path(tempfile.mkdtemp(prefix="forkwise-remote-"))
        cwd = await asyncio.to_thread(make_workspace, self.remote_root)
        return await self.create_session(title, cwd, workspace, session_id)

    async def working_folder(self, session_id: str) -> str:
        """The folder a session's tool calls work in (its header's cwd)."""
        return (await self._serve(session_id)).header.cwd

    async def _take_back(self, session_id: str) -> None:
        """Undo a create that failed after its file was written: the session goes to the
        trash (where a person could still find it), and its agent with it."""
        self._agents.pop(session_id, None)
        self._served.discard(session_id)
        try:
            await self.io(self.store.delete, session_id)
        except ForkwiseError:
            log.exception("could not take back the half-created session %s", session_id)

    async def prompt(self, session_id: str, text: str, wait: bool = False) -> Json:
        if not isinstance(text, str) or not text.strip():
            raise InvalidBoundary("a prompt needs some text", field="text")
        self._check_writable()
        await self._claim(session_id)
        agent = await self._refuse_agent_turn(session_id)
        ahead, outcome = agent.prompt(text)
        out: Json = {"queued": ahead}
        if wait:
            out["outcome"] = await outcome
        return out

    async def _refuse_agent_turn(self, session_id: str) -> Agent:
        """The session's agent, once it is sure the open turn is not an imported session's
        agent's, written into its own file: a prompt, an answer to its tool call or a
        cancel written into this copy would end a turn the agent is still writing (and be
        lost when it appends): refused (`AgentOwnsTurn`). Every entry point (app, CLI, RPC)
        that writes into a turn comes here. No store call beyond the agent's own: a turn
        this host runs is its own, and otherwise the agent's snapshot is read."""
        agent = await self.agent(session_id)
        if not agent.driving and await agent.agents_turn_open():
            raise AgentOwnsTurn(
                "the open turn is written by the agent the session was imported from",
                session_id=session_id,
            )
        return agent

    async def cancel(self, session_id: str) -> Json | None:
        """Cancel the session's turn (not an agent's: `_refuse_agent_turn`)."""
        return await (await self._refuse_agent_turn(session_id)).cancel()

    async def approve(
        self, session_id: str, approval_id: str, approved: bool, wait: bool = False
    ) -> Json | None:
        self._check_writable()
        await self._claim(session_id)
        agent = await self._refuse_agent_turn(session_id)
        outcome = await agent.approve(approval_id, approved)
        return await outcome if wait else None

    async def set_model(
        self, session_id: str, provider: str, model: str, reasoning: str | None = None
    ) -> Json:
        self.provider(provider)
        agent = await self.agent(session_id)
        if agent.busy:
            raise SessionBusy("the model cannot change while a turn runs", session_id=session_id)
        draft = model_select_draft(ModelChoice(provider, model, reasoning))
        from forkwise.core.runtime.turn_state import OpenTurn

        def select() -> Json:
            if OpenTurn.of(self.store.get(session_id)) is not None:
                raise SessionBusy("the model cannot change during a turn", session_id=session_id)
            self.store.append(session_id, [draft])
            return self.row(self.store.summary(session_id))

        return await self.io(select)

    async def rename_session(
        self, session_id: str, title: str | None, *, clear: bool = False
    ) -> Json:
        """`session.rename`: the session's title becomes `title` (a `session/title` event,
        so it survives restarts and is history like any other); the session's summary.
        `clear`: it has no title of its own again (an empty title is logged; the Undo of
        a first rename), and is named as before it was given one."""
        if not clear:
            if not isinstance(title, str) or not title.strip():
                raise InvalidBoundary("a title needs some text", field="title")
            if len(title) > MAX_TITLE:
                raise InvalidBoundary(f"a title has at most {MAX_TITLE} characters",
                                      field="title")
        self._check_writable()
        await self._serve(session_id)
        text = "" if clear or title is None else " ".join(title.split())
        draft = {"type": "session/title", "title": text}

        def rename() -> Json:
            self.store.append(session_id, [draft])
            return self.row(self.store.summary(session_id))

        return await self.io(rename)

    async def delete_session(self, session_id: str) -> Json:
        """Move a session to the store's trash; refused while it runs a turn."""
        self._check_writable()
        agent = self._agents.get(session_id)
        if agent is not None and agent.driving:
            raise SessionBusy("this session is running a turn", session_id=session_id)
        await self.io(self.store.delete, session_id)
        await self.io(self.replays.forget, session_id)
        self._agents.pop(session_id, None)
        self._served.discard(session_id)
        return {"id": session_id, "deleted": True}

    async def restore_session(self, session_id: str) -> Json:
        """Bring a deleted session back from the store's trash (Undo); its row."""
        self._check_writable()

        def restore() -> Json:
            self.store.restore(session_id)
            return self.row(self.store.summary(session_id))

        return await self.io(restore)

    async def list_trash(self) -> list[Json]:
        """The deleted sessions the store keeps, the latest deleted first: each a row (as
        it was when deleted) with `deletedAt`; a copy that cannot be read has its id only."""

        def listed() -> list[Json]:
            rows: list[Json] = []
            for kept in self.store.trashed():
                row = self.row(kept.summary) if kept.summary is not None else {
                    "id": kept.session_id, "title": kept.session_id,
                    "error": {"code": "unreadable", "message": "cannot be read"}}
                row["deletedAt"] = kept.deleted
                rows.append(row)
            return rows

        return await self.io(listed)

    async def empty_trash(self, session_id: str | None = None) -> Json:
        """Let one deleted session (every one when None) go for good: no Undo after it."""
        self._check_writable()
        removed = await self.io(self.store.empty_trash, session_id)
        return {"removed": removed}

    async def list_workspaces(self) -> list[Json]:
        return await self.io(self.workspaces.groups)

    async def attach(self, workspace: str, session_id: str) -> None:
        await self._serve(session_id)
        try:
            await self.io(self.workspaces.attach, workspace, session_id)
        except WorkspaceAttachFailed as exc:
            exc.details.setdefault("childId", session_id)
            raise

    # --- lifetime ------------------------------------------------------------------

    async def close(self) -> None:
        """End running turns as interrupted (waiting ones stay open), release the store."""
        if self._closed:
            return
        self._closed = True
        self._import_stop.set()
        if self._sources is not None:
            await self._sources.close()
        if self._follower is not None:
            await self._follower.close()
        for agent in list(self._agents.values()):
            try:
                await agent.shutdown()
            except ReadOnlyStore:
                pass  # a turn open in a store read here belongs to its writer
            except ForkwiseError:
                log.exception("session %s: could not shut down cleanly", agent.id)
        self._unsubscribe_store()
        if self._unwatch is not None:
            await asyncio.to_thread(self._unwatch)
        self.workers.drain_sessions()  # no agent runs now; let its writes finish
        await self.io(self.store.close)
        with self._made:
            if self._unsubscribe_search is not None:
                self._unsubscribe_search()
            if self._search is not None:
                self._search.close()
        await self.search_built()  # halted by the close: it ends after its batch
        self.workers.shutdown()
