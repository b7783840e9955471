"""The client API every front end uses (GUI, CLI, scripts), local or remote.

The same coroutine methods run over the in-process carrier and the socket carrier; the
host speaks JSON-RPC 2.0 underneath. Data crosses as plain JSON values:

* a *summary* is `SessionSummary.to_dict()` (id, title, parentSession, seedLength, relation,
  events, turns, messages, created, updated, running, waiting, waitingTools, model,
  provider, reasoning, source, cwd, error, titleSet, firstQuestion; `waiting`: the open
  turn waits for the person to answer an `approval/request`, `waitingTools` names the
  tools asked about, in request order; `titleSet`: the title was given, not taken from
  `firstQuestion`), its model the one the next turn runs on (`listing.summary_row`);
* an *event* is `Event.to_record()` (`{"seq", "type", "ts", …fields}`);
* a *message* is `MessageView.to_dict()` (id, role, seq, turn, text, parts, origin?).

Notifications (what `subscribe` delivers), each a dict with a `"kind"` key, typed one
TypedDict a kind in `forkwise.core.notifications` (re-exported here; the client checks
each notification it receives against them and drops one that is none of them):

* `{"kind": "catalogue/upsert", "summary": {...}}` — a session appeared or its row changed;
* `{"kind": "catalogue/remove", "sessionId": ID}`;
* `{"kind": "session/events", "sessionId": ID, "events": [event, …]}` — appended, in order;
* `{"kind": "session/delta", "sessionId": ID, "turn": T, "text": "…"}` — streamed text of
  the assistant step being generated (not persisted; the whole message follows as an event);
* `{"kind": "session/truncate", "sessionId": ID, "variant": "session", "type": "truncate",
  "through_sequence": N}` — replace in place: drop everything after N (never a timeline entry);
* `{"kind": "store/indexing", "done": N, "total": M}` — a listing that reads logs (no
  index yet) got this far;
* `{"kind": "import/progress", "done": N, "total": M, "path": P}` — an import read file N;
* `{"kind": "sources/warnings", "warnings": [{path, line, code, message}, …]}` — a later
  pass over the watched agents' folders kept lines of changed files unread (once per
  change of a file: a file is read again only when it changed);
* `{"kind": "search/indexing", "done": N, "total": M}` — after an import, the search index
  is being built in the background: N of M sessions indexed (N == M: searches answer at
  once from now on);
* `{"kind": "session/turn", "sessionId": ID, "running": bool, "queued": int,
  "waiting": bool}` — `running`: a turn is open (also while it waits for an approval) or
  about to start; `waiting`: the open turn waits for an approval (see `approval/request`
  events and `get_session()["pendingApprovals"]`).

`get_session` returns `{"header", "summary", "state": {running, queued, waiting},
"pendingApprovals": [{approval, call, tool, args}], "model": {provider, model, reasoning?,
label?, offline?}}` (`model` is what the next turn runs on). `prompt` returns
`{"queued": n}`: n prompts run before this one (0: it starts now).

Errors are `forkwise.core.errors.ForkwiseError` subclasses with their stable codes, also when
they crossed the wire. `fork`/`fork_at_message` raise `WorkspaceAttachFailed` only after the
client's catalogue already holds the child (details: `childId`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from forkwise.core.notifications import (
    CATALOGUE_REMOVE,
    CATALOGUE_UPSERT,
    IMPORT_PROGRESS,
    KINDS,
    SEARCH_INDEXING,
    SESSION_DELTA,
    SESSION_EVENTS,
    SESSION_TRUNCATE,
    SESSION_TURN,
    SOURCES_WARNINGS,
    STORE_INDEXING,
    CatalogueRemove,
    CatalogueUpsert,
    ImportProgress,
    Notification,
    SessionDelta,
    SessionEvents,
    SessionTruncate,
    SessionTurn,
    SourcesWarnings,
    StoreIndexing,
)

__all__ = [
    "CATALOGUE_REMOVE",
    "CATALOGUE_UPSERT",
    "IMPORT_PROGRESS",
    "KINDS",
    "SEARCH_INDEXING",
    "SESSION_DELTA",
    "SESSION_EVENTS",
    "SESSION_TRUNCATE",
    "SESSION_TURN",
    "SOURCES_WARNINGS",
    "STORE_INDEXING",
    "CatalogueRemove",
    "CatalogueUpsert",
    "ClientAPI",
    "ImportProgress",
    "Json",
    "Notification",
    "SessionDelta",
    "SessionEvents",
    "SessionTruncate",
    "SessionTurn",
    "SourcesWarnings",
    "StoreIndexing",
    "Unsubscribe",
]

Json = dict[str, Any]
Unsubscribe = Callable[[], Awaitable[None]]


class ClientAPI(Protocol):
    #: id → summary, kept current from notifications; the reconcile step writes here.
    catalogue: dict[str, Json]

    # with `usage`, each row carries {"usage": {"own": {tokens…, "cost"}}}
    async def list_sessions(self, usage: bool = False) -> list[Json]: ...
    # {"own", "shared", "total", "byModel"}: tokens and cost (USD or None) of a session
    async def usage(self, session_id: str) -> Json: ...
    # {"header", "summary", "state", "pendingApprovals", "model", "source"}; "source" for a
    # fork's child: {"sourceId", "changed": bool | None, "missing": bool}, else None;
    # "sourceFile" for an imported session: {"path", "present": bool}, else None
    async def get_session(self, session_id: str) -> Json: ...
    async def events(
        self, session_id: str, after: int = 0, limit: int | None = None
    ) -> list[Json]: ...
    async def messages(self, session_id: str) -> list[Json]: ...
    async def context(self, session_id: str) -> Json: ...  # {"model": {...}, "messages": [...]}
    async def create_session(self, title: str | None = None, cwd: str | None = None) -> Json: ...
    async def prompt(self, session_id: str, text: str) -> Json: ...  # {"queued": n}
    async def cancel(self, session_id: str) -> None: ...
    async def approve(self, session_id: str, approval_id: str, approved: bool) -> None: ...
    async def fork(self, session_id: str, at_seq: int | None = None) -> Json: ...  # child summary
    async def fork_at_message(
        self, session_id: str, message_id: str, include_message: bool = True, replace: bool = False
    ) -> Json: ...  # child summary, or the same session's summary when replace=True
    async def reload_settings(self) -> Json: ...  # {"provider", "model", "reasoning"}
    async def settings(self) -> Json: ...  # {kind, base_url, model, reasoning_effort, key?}
    async def save_settings(self, values: Json, api_key: str = "") -> Json: ...
    async def save_vendor(self, vendor: str, values: Json, api_key: str = "") -> Json: ...
    async def clear_vendor_key(self, vendor: str) -> bool: ...
    async def list_vendor_models(
        self, vendor: str, base_url: str = "", api_key: str = ""
    ) -> list[str]: ...
    async def follow(self, *, catalogue: bool = True) -> list[Json]: ...  # subscribe + rows
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
    ) -> Json: ...  # child summary
    async def truncate(
        self, session_id: str, message_id: str, include_message: bool = True
    ) -> Json: ...  # the session's summary
    async def delete_session(self, session_id: str) -> Json: ...
    async def restore_session(self, session_id: str) -> Json: ...  # Undo a delete: its row
    async def list_trash(self) -> list[Json]: ...  # deleted rows with deletedAt, latest first
    async def empty_trash(self, session_id: str | None = None) -> Json: ...  # {"removed": [...]}
    async def search(self, query: str, limit: int = 50) -> list[Json]: ...  # hits, latest first
    async def sources(self) -> Json: ...  # {"sources": [...], "watching": [...]}
    async def watch_sources(self, tools: list[str]) -> Json: ...  # sources() + failed, warnings
    async def export_session(
        self, session_id: str, tool: str, out: str | None = None, assets: bool = False
    ) -> Json: ...  # {"tool", "path", "id", "resume"}; a document: {"format", "path", "assets"}
    async def import_files(
        self, paths: list[str], tool: str | None = None
    ) -> Json: ...  # the import report
    async def subscribe(self, callback: Callable[[Notification], None]) -> Unsubscribe: ...
    # beyond the minimum: model choice (refused with session-busy during a turn)
    async def set_model(
        self, session_id: str, provider: str, model: str, reasoning: str | None = None
    ) -> Json: ...  # the session's summary
    async def rename_session(self, session_id: str, title: str | None) -> Json: ...  # its summary
    async def models(self) -> list[Json]: ...  # [{provider, model, label?, offline?}]
    async def close(self) -> None: ...
