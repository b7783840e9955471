"""The notifications a host sends its clients: one TypedDict per kind, and its kind string.

The host builds these when it sends (catalogue rows, appended events, truncation,
indexing and import progress; the runtime under it streams text and turn states), the
RPC layer sends each as a JSON-RPC notification whose method is its `kind`, and the
client checks what it receives against them (`received`) before its subscribers see it.
Like `errors`, this module sits outside the layers: the runtime, the host and the client
all speak it, and it imports none of them. `forkwise.core.client.api` documents what each
kind means to a front end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict, cast

#: a JSON object as it crosses the wire (a summary row, an event record)
Json = dict[str, Any]

CATALOGUE_UPSERT: Final = "catalogue/upsert"
CATALOGUE_REMOVE: Final = "catalogue/remove"
SESSION_EVENTS: Final = "session/events"
SESSION_DELTA: Final = "session/delta"
SESSION_TRUNCATE: Final = "session/truncate"
SESSION_TURN: Final = "session/turn"
STORE_INDEXING: Final = "store/indexing"
IMPORT_PROGRESS: Final = "import/progress"
SOURCES_WARNINGS: Final = "sources/warnings"
SEARCH_INDEXING: Final = "search/indexing"


class CatalogueUpsert(TypedDict):
    """A session appeared or its row changed: `summary` is its catalogue row."""

    kind: Literal["catalogue/upsert"]
    summary: Json


class CatalogueRemove(TypedDict):
    kind: Literal["catalogue/remove"]
    sessionId: str


class SessionEvents(TypedDict):
    """Events appended to a session, in order (`Event.to_record()` each)."""

    kind: Literal["session/events"]
    sessionId: str
    events: list[Json]


class SessionDelta(TypedDict):
    """Streamed text of the assistant step being generated (not persisted: the whole
    message follows as an event)."""

    kind: Literal["session/delta"]
    sessionId: str
    turn: str
    text: str


class SessionTruncate(TypedDict):
    """Replace in place: everything after `through_sequence` is gone."""

    kind: Literal["session/truncate"]
    sessionId: str
    variant: Literal["session"]
    type: Literal["truncate"]
    through_sequence: int


class SessionTurn(TypedDict):
    """`running`: a turn is open or about to start; `waiting`: the open turn waits for an
    approval; `queued`: prompts waiting to run after it."""

    kind: Literal["session/turn"]
    sessionId: str
    running: bool
    queued: int
    waiting: bool


class StoreIndexing(TypedDict):
    """A listing that reads logs (no index yet) got this far."""

    kind: Literal["store/indexing"]
    done: int
    total: int


class ImportProgress(TypedDict):
    """An import read its file number `done` of `total`, at `path`."""

    kind: Literal["import/progress"]
    done: int
    total: int
    path: str


class SourcesWarnings(TypedDict):
    """A later pass over the watched agents' folders read changed files and kept some of
    their lines unread (`warnings`, as an import reports them: path, line, code, message);
    the first pass's are in `sources.watch`'s answer."""

    kind: Literal["sources/warnings"]
    warnings: list[Json]
class SearchIndexing(TypedDict):
    """The search index is being built in the background after an import: `done` of
    `total` sessions indexed (done == total: it answers every search at once now)."""

    kind: Literal["search/indexing"]
    done: int
    total: int


Notification = (
    CatalogueUpsert
    | CatalogueRemove
    | SessionEvents
    | SessionDelta
    | SessionTruncate
    | SessionTurn
    | StoreIndexing
    | ImportProgress
    | SourcesWarnings
    | SearchIndexing
)

_SHAPES: dict[str, type[Any]] = {
    CATALOGUE_UPSERT: CatalogueUpsert,
    CATALOGUE_REMOVE: CatalogueRemove,
    SESSION_EVENTS: SessionEvents,
    SESSION_DELTA: SessionDelta,
    SESSION_TRUNCATE: SessionTruncate,
    SESSION_TURN: SessionTurn,
    STORE_INDEXING: StoreIndexing,
    IMPORT_PROGRESS: ImportProgress,
    SOURCES_WARNINGS: SourcesWarnings,
    SEARCH_INDEXING: SearchIndexing,
}
#: every kind, for a front end that tells them apart
KINDS: Final = frozenset(_SHAPES)


def received(params: Mapping[str, Any]) -> Notification | None:
    """A notification as it came off the wire, typed by its kind: None when its kind is
    none of the above or it lacks a field its kind has (the field types are the host's
    to keep: it builds these TypedDicts)."""
    kind = params.get("kind")
    shape = _SHAPES.get(kind) if isinstance(kind, str) else None
    if shape is None or not shape.__required_keys__ <= params.keys():
        return None
    return cast(Notification, params)
