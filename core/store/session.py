"""Session headers, session snapshots, catalogue summaries and the store's change events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, make_dataclass
from itertools import product
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from forkwise.core.errors import CorruptLog, UnsupportedVersion
from forkwise.core.log.event_log import event_types
from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    MESSAGE,
    MODEL_SELECT,
    SESSION_TITLE,
    TURN_END,
    TURN_START,
    Event,
    message_text,
)
from forkwise.core.log.ids import validate_session_id
from forkwise.core.log.prompts import title_text
from forkwise.core.log.usage import EMPTY_USAGE, RECORD_TYPES, OwnUsage, UsageFold

if TYPE_CHECKING:
    from forkwise.core.log.replay import Replay

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
    #: a read-only view of the store's log (an EventView), or any sequence of events
    events: Sequence[Event]
    generation: str

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def last_seq(self) -> int:
        return len(self.events)

    def replay(self) -> Replay:
        # imported when first used: a listing (every start-up) replays nothing
        from forkwise.core.log.replay import replay

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
    #: the time of the last event that is not a rename (a rename is not activity)
    updated: str = ""
    running: bool = False
    model: str | None = None
    provider: str | None = None
    first_user_text: str | None = None
    #: the reasoning target of the latest model/select, if it names one
    reasoning: str | None = None
    #: the tool an imported session came from (its header's meta.source.tool)
    source: str | None = None
    error: Mapping[str, Any] | None = None
    #: the open turn's approval requests with no answer yet, in request order: (approval
    #: id, tool) each; None when there is none (`OpenTurn.pending`'s rule, kept by `fold`)
    approvals: tuple[tuple[str, str], ...] | None = None
    #: its own usage (after its seed), kept so a listing prices it without reading the log;
    #: None when not known (a summary an older index kept)
    usage: OwnUsage | None = None

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
            source=_source_tool(header.meta.get("source")),
            usage=EMPTY_USAGE,
        )

    def fold(
        self,
        events: Sequence[Event],
        counts_from: SessionSummary | None = None,
        source_title: str | None = None,
    ) -> SessionSummary:
        """The summary after `events` were appended (the catalogue's incremental update).

        `counts_from`: a summary already covering the first `counts_from.events` of
        `events` (a fork of a whole log), so that only the rest is folded; `source_title`:
        the title its header meta gave it, if any.
        """
        if counts_from is None:
            fold = SummaryFold(self)
        else:
            fold = SummaryFold(counts_from, self)
            # the source's title may come from its header meta, which this header lacks
            fold.title = _logged_title(events, counts_from, source_title, self.title)
            events = events[counts_from.events :]
        for ev in events:
            fold.add(ev.type, ev.ts, ev.fields)
        return fold.result(self)

    @property
    def display_title(self) -> str:
        """The title the list shows: a slash command reads `/init args`, without the
        markup an agent wraps around it (an importer titles a session by its first
        prompt, markup included)."""
        return title_text(self.title or self.first_user_text or self.id)

    @property
    def waiting(self) -> bool:
        """Whether the open turn waits for the person to answer an approval request."""
        return self.approvals is not None

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
            "waiting": self.approvals is not None,
            #: the tools the open turn asks to approve, in request order ([]: none)
            "waitingTools": [tool for _, tool in self.approvals] if self.approvals else [],
            "model": self.model,
            "provider": self.provider,
            "reasoning": self.reasoning,
            "source": self.source,
            "cwd": self.cwd,
            "error": dict(self.error) if self.error else None,
            # whether the title was given (header meta or a session/title event), not
            # taken from the first question: a fork that copied its question is named
            # after its source (a GUI tells a fork's copied question from its own)
            "titleSet": self.title is not None,
            "firstQuestion": self.first_user_text,
        }

    def to_index(self) -> dict[str, Any]:
        """The form kept in the on-disk catalogue (round-trips through from_index)."""
        out = self.to_dict()
        # what `approvals`, `title` and `firstUserText` say
        del out["waiting"], out["waitingTools"], out["titleSet"], out["firstQuestion"]
        out["title"] = self.title
        out["firstUserText"] = self.first_user_text
        out["approvals"] = dict(self.approvals) if self.approvals else None
        out["usage"] = None if self.usage is None else self.usage.to_index()
        return out

    @classmethod
    def from_index(cls, data: Mapping[str, Any]) -> SessionSummary:
        """Rebuild a summary from the index; KeyError/TypeError when `data` is not one.

        Runs once per session on every listing, so it checks exact types (JSON decodes to
        exact types; bool must not pass for int) and builds the record positionally: the
        index keys are listed in the dataclass's field order. The checks run in C (one
        itemgetter, one lookup of the row's types among the allowed ones): 10,000 rows at
        every start-up. An object without `approvals` (written before they were kept)
        waits for nothing: `from_older_index` says when that is exact."""
        values = _index_values(data)
        if tuple(map(type, values)) not in _INDEX_TYPE_ROWS:
            raise TypeError("an index field has the wrong type")
        error = data.get("error")
        if error is not None and type(error) is not dict:
            raise TypeError("index field 'error' has the wrong type")
        approvals = data.get("approvals")
        if approvals is not None:
            approvals = _approvals_from_index(approvals)
        usage = OwnUsage.from_index(data.get("usage"))
        fields: tuple[Any, ...] = (*values, error, approvals, usage)  # the keys are the fields
        if cls is not SessionSummary:
            return cls(*fields)
        # as from_index_row builds it (a database's listing makes one a row, 10,000 of
        # them: the frozen constructor was a third of its Python work)
        summary = _UnfrozenSummary(*fields)
        summary.__class__ = SessionSummary
        return summary  # type: ignore[no-any-return]

    @classmethod
    def from_older_index(cls, data: object) -> SessionSummary:
        """A summary as the index of the version before `approvals` were kept holds it (a
        row one value short, or an object without them), when it is exact without them:
        a session with no open turn waits for nothing. TypeError otherwise: a session
        whose log ends in an open turn is summarized from its log again (a few)."""
        if type(data) is list and len(data) == len(INDEX_ROW_KEYS) - 1:
            summary = cls.from_index_row([*data, None])
        elif type(data) is dict:
            summary = cls.from_index(data)
            if "approvals" in data:
                return summary  # not older: exact as it is
        else:
            raise TypeError("not a summary of an index of the previous version")
        if summary.running:
            raise TypeError("an older index does not say whether this open turn waits")
        return summary

    def to_index_row(self) -> list[Any]:
        """The form an index entry keeps (round-trips through from_index_row): the values
        of `INDEX_ROW_KEYS`, in order. A row, not an object: every start-up decodes 10,000
        of them, and a row decodes in about two thirds of the time."""
        row = self.to_index()
        return [row[key] for key in INDEX_ROW_KEYS]

    @classmethod
    def from_index_row(cls, row: object, usage: OwnUsage | None = None) -> SessionSummary:
        """Rebuild a summary from an index row; TypeError when `row` is not one (the same
        exact-type checks as from_index). `usage`: what the entry keeps beside the row."""
        if type(row) is not list or tuple(map(type, row)) not in _INDEX_ROW_TYPES:
            raise TypeError("an index row has the wrong shape or a field of the wrong type")
        approvals = row[-1]
        if approvals is not None:  # the few sessions waiting for a person
            row = [*row[:-1], _approvals_from_index(approvals)]
        if cls is not SessionSummary:
            values: list[Any] = [*row, usage]
            return cls(*values)  # the keys are the fields, in order
        # A frozen dataclass sets each field through object.__setattr__, eight times the
        # cost of a plain one: built as its unfrozen twin (same slots), then made what it is
        summary = _UnfrozenSummary(*row, usage)
        summary.__class__ = SessionSummary
        return summary  # type: ignore[no-any-return]


def _approvals_from_index(data: object) -> tuple[tuple[str, str], ...] | None:
    """The `approvals` an index keeps (an object: approval id → tool) as the field holds
    them; TypeError when it is not one."""
    if type(data) is not dict or not all(
        type(k) is str and type(v) is str for k, v in data.items()
    ):
        raise TypeError("index field 'approvals' has the wrong type")
    return tuple(data.items()) or None


#: SessionSummary's slots in a class that is not frozen: a row becomes a summary this way
#: (`from_index_row`), ten thousand of them at every start-up
_UnfrozenSummary: Any = make_dataclass(
    "_UnfrozenSummary",
    [f.name for f in fields(SessionSummary)],
    slots=True,
    repr=False,
    eq=False,
)

_STR: frozenset[type] = frozenset({str})
_OPT: frozenset[type] = frozenset({str, type(None)})
_INT: frozenset[type] = frozenset({int})
#: index key → the exact types it may hold, in SessionSummary's field order (error apart)
_INDEX_TYPES: dict[str, frozenset[type]] = {
    "id": _STR, "created": _STR, "cwd": _STR, "parentSession": _OPT, "seedLength": _INT,
    "relation": _OPT, "title": _OPT, "events": _INT, "turns": _INT, "messages": _INT,
    "updated": _STR, "running": frozenset({bool}), "model": _OPT, "provider": _OPT,
    "firstUserText": _OPT, "reasoning": _OPT, "source": _OPT,
}  # fmt: skip
_INDEX_KEYS = tuple(_INDEX_TYPES)
#: the values of an index row (SessionSummary.to_index_row), in order: the fields
INDEX_ROW_KEYS = (*_INDEX_KEYS, "error", "approvals")
_index_values = itemgetter(*_INDEX_KEYS)  # KeyError when one is missing
#: every allowed combination of exact types, in key order (2**8 rows: eight optional fields)
_INDEX_TYPE_ROWS: frozenset[tuple[type, ...]] = frozenset(product(*_INDEX_TYPES.values()))
#: the same for an index row, its error and approvals (None or an object each) last: one
#: lookup checks a row
_OBJ = (type(None), dict)
_INDEX_ROW_TYPES = frozenset(product(*_INDEX_TYPES.values(), _OBJ, _OBJ))


def _source_tool(source: object) -> str | None:
    if isinstance(source, Mapping) and isinstance(source.get("tool"), str):
        return str(source["tool"])
    return None


def _logged_title(
    events: Sequence[Event], covered: SessionSummary, header_title: str | None, own: str | None
) -> str | None:
    """The title the first `covered.events` events set (the last `session/title`), else
    `own`. A covered title that its header did not give must come from an event."""
    if covered.title is None:
        return own  # every session/title event sets a string
    if covered.title != header_title:
        return covered.title
    types = event_types(events)
    found = next((i for i in range(covered.events - 1, -1, -1) if types[i] == SESSION_TITLE), None)
    # an empty title took the title away
    return (events[found].get("title") or None) if found is not None else own


class SummaryFold:
    """A summary being brought up to date one event at a time: `SessionSummary.fold`, and
    the loader, which checks lines without building events."""

    __slots__ = (
        "approvals",
        "events",
        "first_user",
        "messages",
        "model",
        "provider",
        "reasoning",
        "running",
        "title",
        "turns",
        "updated",
        "usage",
    )  # fmt: skip

    def __init__(self, base: SessionSummary, own: SessionSummary | None = None) -> None:
        """`own`: the session's own start when `base` is its source's summary (a fork of a
        whole log), whose seed and usage (none) the fold starts from."""
        self.events, self.turns, self.messages = base.events, base.turns, base.messages
        self.running, self.title = base.running, base.title
        self.model, self.provider, self.reasoning = base.model, base.provider, base.reasoning
        self.updated, self.first_user = base.updated, base.first_user_text
        #: approval id → tool of the open turn's unanswered requests; None: there is none
        self.approvals = dict(base.approvals) if base.approvals else None
        self.usage = _usage_fold(base, base if own is None else own)

    def add(self, etype: str, ts: str, fields: Mapping[str, Any]) -> None:
        self.events += 1
        if etype != SESSION_TITLE:  # a rename is not activity: the list keeps its order
            self.updated = ts
        if etype == MESSAGE:
            self.messages += 1
            if self.first_user is None and fields.get("role") == "user":
                self.first_user = message_text(fields)[:200]
            if self.usage is not None and "usage" in fields:  # pi's, on its message
                self.usage.add(self.events, etype, fields, ts, str(self.model or ""))
        elif etype == TURN_START:
            self.turns += 1
            self.running = True
            self.approvals = None
        elif etype == TURN_END:
            self.running = False
            self.approvals = None  # every status closes the turn and what it asked
            if self.usage is not None:
                self.usage.turn_end(self.events)
        elif etype == MODEL_SELECT:
            self.model, self.provider = fields.get("model"), fields.get("provider")
            reasoning = fields.get("reasoning")
            self.reasoning = reasoning if type(reasoning) is str else None
        elif etype == SESSION_TITLE:
            self.title = fields.get("title") or None  # an empty one takes a title away
        elif etype == APPROVAL_REQUEST:
            # OpenTurn.pending's rule: keyed by approval id (asked again: the later tool,
            # in the first place), gone when answered; a turn's end or start clears them
            if self.approvals is None:
                self.approvals = {}
            self.approvals[fields["approval"]] = fields["tool"]
        elif etype == APPROVAL_RESOLVE and self.approvals is not None:
            self.approvals.pop(fields["approval"], None)
        elif etype in RECORD_TYPES and self.usage is not None:
            self.usage.add(self.events, etype, fields, ts, str(self.model or ""))

    def result(self, start: SessionSummary) -> SessionSummary:
        """`start` (the session's own header facts) with the counts folded so far."""
        # the constructor, not dataclasses.replace: once an append, and replace walks the
        # class's fields each call (3.4 us against 2.5 us, measured)
        return SessionSummary(
            id=start.id,
            created=start.created,
            cwd=start.cwd,
            parent_session=start.parent_session,
            seed_length=start.seed_length,
            relation=start.relation,
            title=self.title,
            events=self.events,
            turns=self.turns,
            messages=self.messages,
            # its last activity is not before it was made: a session whose lines are all
            # copied (a Continue in read back) is dated when it was made, not in 2025
            updated=max(self.updated, start.created),
            running=self.running,
            model=self.model,
            provider=self.provider,
            first_user_text=self.first_user,
            reasoning=self.reasoning,
            source=start.source,
            error=start.error,
            approvals=tuple(self.approvals.items()) if self.approvals else None,
            usage=None if self.usage is None else self.usage.result(),
        )


def _usage_fold(base: SessionSummary, own: SessionSummary) -> UsageFold | None:
    """The usage fold of a summary fold from `base` for the session `own` starts: from
    its kept usage, its first turn after the seed kept apart when it is a fork folded
    from its seed; None when its usage is not known (or not of this form)."""
    if own.usage is None:
        return None
    heading = own.parent_session is not None and base.events <= own.seed_length
    try:
        return UsageFold(own.usage, own.seed_length, heading)
    except TypeError:
        return None


# --- the store's change events (plain Python; backends and the catalogue subscribe) ---


@dataclass(frozen=True, slots=True)
class SessionCreated:
    """A session came to be: its header, its seed (seedLength events) and the events that
    follow the seed at creation (a fork's `history/fork`). Persisted once, atomically."""

    kind: ClassVar[str] = "session/created"
    header: SessionHeader
    seed: Sequence[Event]
    #: a tuple of events, or a view of a checked log's lines (an import: not decoded)
    events: Sequence[Event] = ()
    #: for a fork: the session whose first len(seed) events the seed is, line for line, so
    #: a backend may copy those bytes instead of writing each event again
    copied_from: str | None = None
    #: for a fork made from the backend's index (the seed not read): where the seed's
    #: lines stand in the source's file, as the backend said (start and end offsets)
    seed_span: tuple[int, int] | None = None
    #: for an import: the header line as it was read, kept byte for byte (encoding the
    #: parsed header again would change what JSON numbers and escapes it holds)
    header_raw: bytes | None = None
    #: for an import of many sessions: the backend may make the new session's name durable
    #: at the next `SessionFlushed` of it (one directory sync for a batch of files); its
    #: content is durable before it has a name, as for every new session
    name_later: bool = False
    #: for an import's branch: the parent whose first len(seed) events the seed is, line
    #: for line, so a backend may store the seed by reference to them (checked there)
    seed_in: str | None = None

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
    kept: Sequence[Event]
    #: the header after truncation: seedLength shrinks when the cut falls inside the seed
    header: SessionHeader | None = None


@dataclass(frozen=True, slots=True)
class SessionDisposed:
    kind: ClassVar[str] = "session/disposed"
    session_id: str


StoreEvent = SessionCreated | EventsAppended | SessionFlushed | SessionTruncated | SessionDisposed
