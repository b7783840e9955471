"""Session headers, session snapshots, catalogue summaries and the store's change events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from .errors import CorruptLog, UnsupportedVersion
from .events import MESSAGE, MODEL_SELECT, SESSION_TITLE, TURN_END, TURN_START, Event, message_text
from .ids import validate_session_id
from .replay import Replay, replay

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """Line 1 of a session file, written once when the session is created."""

    id: str
    created: str
    cwd: str
    parent_session: str | None = None
    seed_length: int = 0
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    version: int = FORMAT_VERSION

    def to_record(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": self.version,
            "id": self.id,
            "created": self.created,
            "cwd": self.cwd,
            "parentSession": self.parent_session,
            "seedLength": self.seed_length,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_record(cls, record: object) -> SessionHeader:
        """Validate a decoded header line; upgrades older formats when there are any."""
        if not isinstance(record, dict) or record.get("type") != "session":
            raise CorruptLog('line 1 is not a session header ({"type": "session", …})')
        version = record.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise CorruptLog("the header has no integer version")
        if version > FORMAT_VERSION:
            raise UnsupportedVersion(
                f"written by a newer Forkwise (format {version}; this one reads {FORMAT_VERSION})",
                version=version,
            )
        sid = validate_session_id(record.get("id"))
        parent = record.get("parentSession")
        if parent is not None:
            validate_session_id(parent)
        seed_length = record.get("seedLength", 0)
        if not isinstance(seed_length, int) or isinstance(seed_length, bool) or seed_length < 0:
            raise CorruptLog("seedLength must be a non-negative integer")
        meta = record.get("meta") or {}
        created, cwd = record.get("created", ""), record.get("cwd", "")
        if not isinstance(meta, dict) or not isinstance(created, str) or not isinstance(cwd, str):
            raise CorruptLog("header fields created/cwd must be strings and meta an object")
        return cls(sid, created, cwd, parent, seed_length, MappingProxyType(meta), version)


@dataclass(frozen=True, slots=True)
class Session:
    """An immutable snapshot of one session, as the store held it when it was obtained.

    `generation` changes when the session is truncated, deleted or replaced; the store
    refuses a snapshot whose generation is no longer current (`stale-session`).
    """

    header: SessionHeader
    events: tuple[Event, ...]
    generation: str

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def last_seq(self) -> int:
        return len(self.events)

    def replay(self) -> Replay:
        return replay(self.events, self.header.parent_session, self.header.seed_length)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One catalogue row: what a session list shows without replaying the session."""

    id: str
    created: str
    cwd: str
    parent_session: str | None = None
    seed_length: int = 0
    relation: str | None = None
    title: str | None = None
    events: int = 0
    turns: int = 0
    messages: int = 0
    updated: str = ""
    running: bool = False
    model: str | None = None
    provider: str | None = None
    first_user_text: str | None = None
    error: Mapping[str, Any] | None = None

    @classmethod
    def start(cls, header: SessionHeader) -> SessionSummary:
        relation = header.meta.get("relation")
        if relation is None and header.parent_session is not None:
            relation = "fork"
        return cls(
            id=header.id,
            created=header.created,
            cwd=header.cwd,
            parent_session=header.parent_session,
            seed_length=header.seed_length,
            relation=relation if isinstance(relation, str) else None,
            title=header.meta.get("title") if isinstance(header.meta.get("title"), str) else None,
            updated=header.created,
        )

    def fold(
        self, events: Sequence[Event], counts_from: SessionSummary | None = None
    ) -> SessionSummary:
        """The summary after `events` were appended (the catalogue's incremental update).

        `counts_from`: a summary already covering the first `counts_from.events` of
        `events` (a fork of a whole log), so that only the rest is folded.
        """
        base = counts_from if counts_from is not None else self
        n_events, turns, messages = base.events, base.turns, base.messages
        running, title, model, provider = base.running, base.title, base.model, base.provider
        updated, first_user = base.updated, base.first_user_text
        if counts_from is not None:
            # the source's title may come from its header meta, which this header lacks
            covered = reversed(events[: counts_from.events])
            title = next((e.get("title") for e in covered if e.type == SESSION_TITLE), self.title)
            events = events[counts_from.events :]
        for ev in events:
            n_events += 1
            updated = ev.ts
            etype = ev.type
            if etype == MESSAGE:
                messages += 1
                if first_user is None and ev.get("role") == "user":
                    first_user = message_text(ev)[:200]
            elif etype == TURN_START:
                turns += 1
                running = True
            elif etype == TURN_END:
                running = False
            elif etype == MODEL_SELECT:
                model, provider = ev.get("model"), ev.get("provider")
            elif etype == SESSION_TITLE:
                title = ev.get("title")
        return replace(
            self,
            events=n_events,
            turns=turns,
            messages=messages,
            running=running,
            title=title,
            model=model,
            provider=provider,
            updated=updated,
            first_user_text=first_user,
        )

    @property
    def display_title(self) -> str:
        return self.title or self.first_user_text or self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.display_title,
            "parentSession": self.parent_session,
            "seedLength": self.seed_length,
            "relation": self.relation,
            "events": self.events,
            "turns": self.turns,
            "messages": self.messages,
            "created": self.created,
            "updated": self.updated,
            "running": self.running,
            "model": self.model,
            "provider": self.provider,
            "cwd": self.cwd,
            "error": dict(self.error) if self.error else None,
        }

    def to_index(self) -> dict[str, Any]:
        """The form kept in the on-disk catalogue (round-trips through from_index)."""
        out = self.to_dict()
        out["title"] = self.title
        out["firstUserText"] = self.first_user_text
        return out

    @classmethod
    def from_index(cls, data: Mapping[str, Any]) -> SessionSummary:
        """Rebuild a summary from the index; KeyError/TypeError when `data` is not one.

        Runs once per session on every listing, so it checks exact types (JSON decodes to
        exact types; bool must not pass for int) and builds the record positionally: the
        index keys are listed in the dataclass's field order."""
        values = [data[key] for key in _INDEX_KEYS]
        for value, allowed in zip(values, _INDEX_ALLOWED, strict=True):
            if type(value) not in allowed:
                raise TypeError("an index field has the wrong type")
        error = data.get("error")
        if error is not None and type(error) is not dict:
            raise TypeError("index field 'error' has the wrong type")
        values.append(error)
        return cls(*values)


_STR: frozenset[type] = frozenset({str})
_OPT: frozenset[type] = frozenset({str, type(None)})
_INT: frozenset[type] = frozenset({int})
#: index key → the exact types it may hold, in SessionSummary's field order (error apart)
_INDEX_TYPES: dict[str, frozenset[type]] = {
    "id": _STR, "created": _STR, "cwd": _STR, "parentSession": _OPT, "seedLength": _INT,
    "relation": _OPT, "title": _OPT, "events": _INT, "turns": _INT, "messages": _INT,
    "updated": _STR, "running": frozenset({bool}), "model": _OPT, "provider": _OPT,
    "firstUserText": _OPT,
}  # fmt: skip
_INDEX_KEYS = tuple(_INDEX_TYPES)
_INDEX_ALLOWED = tuple(_INDEX_TYPES.values())


# --- the store's change events (plain Python; backends and the catalogue subscribe) ---


@dataclass(frozen=True, slots=True)
class SessionCreated:
    """A session came to be: its header, its seed (seedLength events) and the events that
    follow the seed at creation (a fork's `history/fork`). Persisted once, atomically."""

    kind: ClassVar[str] = "session/created"
    header: SessionHeader
    seed: tuple[Event, ...]
    events: tuple[Event, ...] = ()
    #: for a fork: the session whose first len(seed) events the seed is, line for line, so
    #: a backend may copy those bytes instead of writing each event again
    copied_from: str | None = None

    @property
    def session_id(self) -> str:
        return self.header.id


@dataclass(frozen=True, slots=True)
class EventsAppended:
    kind: ClassVar[str] = "session/event"
    session_id: str
    events: tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class SessionFlushed:
    """Everything appended so far must be durable when handling this returns."""

    kind: ClassVar[str] = "session/flush"
    session_id: str


@dataclass(frozen=True, slots=True)
class SessionTruncated:
    """Replace in place: events after `through` (and summaries covering them) are gone."""

    kind: ClassVar[str] = "session/truncate"
    session_id: str
    through: int
    kept: tuple[Event, ...]
    #: the header after truncation: seedLength shrinks when the cut falls inside the seed
    header: SessionHeader | None = None


@dataclass(frozen=True, slots=True)
class SessionDisposed:
    kind: ClassVar[str] = "session/disposed"
    session_id: str


StoreEvent = SessionCreated | EventsAppended | SessionFlushed | SessionTruncated | SessionDisposed
