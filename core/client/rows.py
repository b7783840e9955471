"""A session's summary row as the client hands it out (`list_sessions`, the catalogue,
`catalogue/upsert` notifications): one typed definition for every front end.

The host builds it with `SessionSummary.to_dict()` and always sends every key; `session_row`
makes a complete row from a partial mapping (the keys missing take their defaults), for a
row built by hand or by an older host. Keys a newer host adds are kept as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast


class SessionRow(TypedDict):
    id: str
    #: the given title, else the first question, else the id
    title: str
    parentSession: str | None
    #: the fork point: events of the source a fork copied
    seedLength: int | None
    #: "fork", "subagent", "continued"…, None for a session of its own (a fork if it has a
    #: parent)
    relation: str | None
    events: int
    turns: int
    messages: int
    created: str
    updated: str
    running: bool
    #: the open turn waits for the person to answer an approval
    waiting: bool
    #: the tools asked about, in request order
    waitingTools: list[str]
    model: str | None
    provider: str | None
    reasoning: str | None
    #: the agent an imported session came from ("claude", "codex", "pi"), else None
    source: str | None
    cwd: str | None
    #: why the session's log cannot be read (code, message…), else None
    error: dict[str, Any] | None
    #: the title was given, not taken from the first question
    titleSet: bool
    firstQuestion: str | None
    #: {"own": {tokens…, "cost"}}: only when the listing was asked with usage
    usage: NotRequired[dict[str, Any]]


#: each key of a row and its value when a partial row lacks it
DEFAULTS: dict[str, Any] = {
    "title": "", "parentSession": None, "seedLength": None, "relation": None, "events": 0,
    "turns": 0, "messages": 0, "created": "", "updated": "", "running": False,
    "waiting": False, "waitingTools": [], "model": None, "provider": None, "reasoning": None,
    "source": None, "cwd": None, "error": None, "titleSet": True, "firstQuestion": None,
}  # fmt: skip
KEYS = frozenset({"id", *DEFAULTS})


def session_row(data: Mapping[str, Any]) -> SessionRow:
    """`data` as a complete row: itself when it has every key (no copy), else a copy with
    the missing keys at their defaults. `data` must have an `id`."""
    if len(data) >= len(KEYS) and data.keys() >= KEYS and isinstance(data, dict):
        return cast(SessionRow, data)
    row = {key: (list(value) if isinstance(value, list) else value)
           for key, value in DEFAULTS.items()}
    row.update(data)
    row["id"] = str(data["id"])
    return cast(SessionRow, row)


class SearchHit(TypedDict):
    """One hit of `search`: a message (or a title) of a session, the latest first."""

    sessionId: str
    #: the session's title as the host names it (a front end may name it as its list does)
    title: str
    seq: int
    messageId: str | None
    ts: str
    #: "user", "assistant" or "title"
    kind: str
    #: the matched text around the words, each matched word in « »
    snippet: str


def search_hit(data: Mapping[str, Any]) -> SearchHit:
    """`data` (a hit as the host sends it) as a typed hit, missing keys at their defaults."""
    return SearchHit(
        sessionId=str(data["sessionId"]), title=str(data.get("title") or data["sessionId"]),
        seq=int(data.get("seq") or 0), messageId=data.get("messageId"),
        ts=str(data.get("ts") or ""), kind=str(data.get("kind") or ""),
        snippet=str(data.get("snippet") or ""),
    )
