"""How the sessions a reader read from one file are laid out in the store: parents
before their children, and a child's history shared with its parent stored once — the
child a fork of the parent at the last turn end they share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import orjson

from forkwise.core.formats.base import ImportedSession, Record
from forkwise.core.log.event_log import event_lines, head
from forkwise.core.log.events import HISTORY_FORK, TURN_END, TURN_START, Event
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore


class Stored(Protocol):
    """A stored session as `layout` reads its parent: the header and the events."""

    @property
    def header(self) -> SessionHeader: ...

    @property
    def events(self) -> Sequence[Event]: ...


class Sessions(Protocol):
    """Where `layout` looks a parent up: the store, or the sessions of one file laid out
    so far (`import_ahead`, in a worker process)."""

    def exists(self, session_id: str) -> bool: ...

    def get(self, session_id: str) -> Stored: ...


def parents_first(sessions: Sequence[ImportedSession]) -> list[ImportedSession]:
    """The sessions, each after the parent it has among them. A loop, not a recursive
    closure: a closure that calls itself is a reference cycle, and the cycle would keep
    every record of the file alive until the collector (paused by an import) ran."""
    by_id = {s.id: s for s in sessions}
    out: list[ImportedSession] = []
    placed: set[str] = set()
    for s in sessions:
        chain: list[ImportedSession] = []
        seen: set[str] = set()
        at: ImportedSession | None = s
        while at is not None and at.id not in placed and at.id not in seen:
            chain.append(at)
            seen.add(at.id)
            at = by_id.get(at.parent) if at.parent is not None else None
        for found in reversed(chain):
            placed.add(found.id)
            out.append(found)
    return out


def full_of_stored(store: SessionStore, sid: str) -> list[Record]:
    """An imported session's conversation as its reader gave it: the stored events less
    the `history/fork` this module put after its seed."""
    snap = store.get(sid)
    records = records_of(snap.events)
    for record in records:
        del record["seq"]
    seed = snap.header.seed_length
    forked = snap.header.parent_session is not None and seed < len(records)
    if forked and records[seed].get("type") == HISTORY_FORK:
        del records[seed]
    return records


def records_of(events: Sequence[Event], n: int | None = None) -> list[Record]:
    """The first `n` (all) stored events as fresh records, as `to_record` gives them: each
    line decoded once, no `Event` built (nor kept in the stored log, for a parent whose
    children are imported after it)."""
    loads = orjson.loads
    return [loads(line) for line in event_lines(head(events, len(events) if n is None else n))]


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two records are equal but for their `src` and `seq`: compared key by key,
    not as two copies without them (a fork's copy of its parent's events differs in every
    `src`; a parent's records are numbered where they are when it is stored, a reader's
    `seq_first` records carry a placeholder)."""
    if a == b:
        return True
    if len(a) - ("src" in a) - ("seq" in a) != len(b) - ("src" in b) - ("seq" in b):
        return False
    missing = object()
    return all(k in _NOT_COMPARED or b.get(k, missing) == v for k, v in a.items())


#: the keys two records of the same event may differ in (`_same`)
_NOT_COMPARED = frozenset({"src", "seq"})


def shared_turns(mine: Sequence[Record], theirs: Sequence[Record]) -> int:
    """How many leading events two conversations share, cut back to the last `turn/end`
    among them (a fork never starts inside a turn)."""
    k = 0
    for a, b in zip(mine, theirs, strict=False):
        if not _same(a, b):
            break
        k += 1
    while k > 0 and mine[k - 1].get("type") != TURN_END:
        k -= 1
    return k


#: a reply's tokens as the readers give them, and as they gave a Claude Code reply's before
#: (`{"message", "usage"}`); before, a Codex token count gave no `usage` event at all
USAGE = "usage"
LEGACY_USAGE = "plugin/claude/usage"
_USAGE_LIKE = frozenset({USAGE, LEGACY_USAGE})


def _same_usage(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether one is a `usage` event and the other the earlier form of the same one."""
    if a.get("type") == LEGACY_USAGE:
        a, b = b, a
    return (
        a.get("type") == USAGE
        and b.get("type") == LEGACY_USAGE
        and a.get("message") == b.get("message")
        and a.get("raw") == b.get("usage")
    )


class Aligned(NamedTuple):
    """Where two conversations part (`aligned_turns`)."""

    mine: int  # events of each in step
    theirs: int
    cut: tuple[int, int]  # the same, through the last `turn/end` among them
    exact: bool  # the events in step are equal but for `seq` (or an earlier form of usage)


def aligned_turns(mine: Sequence[Record], theirs: Sequence[Record]) -> Aligned:
    """The leading events two conversations share when one of them may have been read by
    an earlier reader (stored before the readers made `usage` events): such an event is
    the same as its earlier form, and one that only one side has is passed over; other
    events compare as in `shared_turns`, whose count `cut` is when there are none."""
    i = j = 0
    cut = (0, 0)
    exact = True
    while i < len(mine) and j < len(theirs):
        a, b = mine[i], theirs[j]
        if a == b or _same(a, b) or _same_usage(a, b):
            if exact and a != b and a.get("type") == b.get("type"):
                exact = _but_seq(a) == _but_seq(b)
            i += 1
            j += 1
            if a.get("type") == TURN_END:
                cut = (i, j)
        elif a.get("type") == USAGE and b.get("type") not in _USAGE_LIKE:
            i += 1
        elif b.get("type") == USAGE and a.get("type") not in _USAGE_LIKE:
            j += 1
        else:
            break
    return Aligned(i, j, cut, exact)


def _but_seq(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "seq"}


def _content(record: Record) -> tuple[Any, ...] | None:
    """What a record says, without the ids a copy may give anew (message, turn and tool
    item ids); None for what a copy may leave out (plugin events, titles, fork marks)."""
    etype = record.get("type")
    if etype == "message":
        parts = [
            _call_content(p) if p.get("type") == "tool_call" else p
            for p in record.get("parts") or ()
            if isinstance(p, dict)
        ]
        return (etype, record.get("role"), parts)
    if etype == "tool/result":
        return (etype, record.get("tool"), record.get("output"), bool(record.get("error")))
    if etype == TURN_START:
        return (etype,)
    if etype == TURN_END:
        return (etype, record.get("status"))
    if etype == "model/select":
        return (etype, record.get("model"), record.get("reasoning"))
    if isinstance(etype, str) and etype.startswith("context/"):
        return (etype, record.get("text"))
    return None


def _call_content(part: Record) -> Record:
    """A tool call without its id, its arguments without the empty fields a newer tool
    writes out (Codex 0.171 spells a shell action's unset fields as null)."""
    args = part.get("args")
    if isinstance(args, dict):
        args = {k: v for k, v in args.items() if v is not None}
    return {"name": part.get("name"), "args": args}


def shared_by_content(mine: Sequence[Record], theirs: Sequence[Record]) -> tuple[int, int]:
    """Where two conversations part when one is a copy of the other's beginning whose
    ids were made anew and whose bookkeeping was left out (Codex's `thread/fork` of a
    rollout an older Codex wrote): the events of each, through the last `turn/end` they
    share by content, as (how many of `mine`, how many of `theirs`). A model choice only
    one of them states is passed over (the copy may lack the turn contexts)."""
    i = j = 0
    cut = (0, 0)
    while i < len(mine) and j < len(theirs):
        a, b = _content(mine[i]), _content(theirs[j])
        if a is None or (a[0] == "model/select" and b != a):
            i += 1
            continue
        if b is None or b[0] == "model/select":
            j += 1
            continue
        if a != b:
            break
        i += 1
        j += 1
        if a[0] == TURN_END:
            cut = (i, j)
    return cut


def layout(
    store: Sessions, s: ImportedSession, parent_full: list[Record] | None
) -> tuple[SessionHeader, list[Record]]:
    """The header and the records (with seq) a session is stored as."""
    meta: dict[str, Any] = {"source": s.source.to_meta()}
    if s.title:
        meta["title"] = s.title
    if s.relation is not None:
        meta["relation"] = s.relation
    if s.parent is None or parent_full is None:
        header = SessionHeader(s.id, s.created, s.cwd, None, 0, MappingProxyType(meta))
        return header, _numbered(s.events, in_place=s.seq_first)
    shared, theirs = aligned_turns(s.events, parent_full).cut
    if shared == 0 and s.relation in ("fork", "subagent"):
        shared, theirs = shared_by_content(s.events, parent_full)
    parent = store.get(s.parent) if store.exists(s.parent) else None
    if parent is None:  # the parent failed: stand alone rather than lose the session
        header = SessionHeader(s.id, s.created, s.cwd, None, 0, MappingProxyType(meta))
        return header, _numbered(s.events, in_place=s.seq_first)
    seed = theirs  # `shared` of the reader's list stand for `theirs` of the parent's
    p_seed = parent.header.seed_length
    if parent.header.parent_session is not None and theirs > p_seed:
        seed = theirs + 1  # the parent's own history/fork sits inside the shared part
    prefix = records_of(parent.events, seed)
    fork_event: Record = {
        "type": HISTORY_FORK,
        "ts": s.events[shared]["ts"] if shared < len(s.events) else s.created,
        "source": s.parent,
        "boundary": seed,
    }
    if s.relation is not None:
        fork_event["relation"] = s.relation
    parent_forked = parent.header.parent_session is not None

    def stored_seq(i: int) -> int:
        """Where event i of the reader's list (1-based) sits in the stored child."""
        if i <= shared:
            if shared != theirs:  # matched by content: no event of it stands alone
                return seed
            return i + 1 if parent_forked and i > p_seed else i
        return i + (seed - shared) + 1

    own = [_renumber_through(r, stored_seq) for r in s.events[shared:]]
    if s.seq_first:
        rest = _numbered([{"seq": 0, **fork_event}, *own], start=seed + 1, in_place=True)
    else:
        rest = _numbered([fork_event, *own], start=seed + 1)
    header = SessionHeader(s.id, s.created, s.cwd, s.parent, seed, MappingProxyType(meta))
    return header, [*prefix, *rest]


def _renumber_through(record: Record, stored_seq: Callable[[int], int]) -> Record:
    """A context summary says which events it covers (`through`, a seq of the reader's
    list): in a stored child that seq moves past the fork's own `history/fork`."""
    through = record.get("through")
    if not record["type"].startswith("context/") or type(through) is not int or through < 1:
        return record
    return {**record, "through": stored_seq(through)}


def _numbered(records: list[Record], start: int = 1, *, in_place: bool = False) -> list[Record]:
    """The records with their seq, keys in the order a log line has them: fresh copies, or
    (`in_place`, for records made `seq` first: `ImportedSession.seq_first`) the records
    themselves, numbered where they are. A record of a session laid out earlier may be
    renumbered then: that session's lines are encoded already (`store_sessions` stores
    each session before it lays out the next), and comparisons ignore `seq` (`_same`)."""
    if in_place:
        for seq, r in enumerate(records, start):
            r["seq"] = seq
        return records
    return [
        {"seq": seq, "type": r["type"], "ts": r["ts"], **r} for seq, r in enumerate(records, start)
    ]
