"""Forks of one source at one point, and what tells them apart.

Sessions forked from the same source (`parentSession`) at the same point (`seedLength`)
are siblings: the transcript steps between them ("2/3" with arrows). The source itself is not one
of them (it is reached through the "Forked from" link), nor is a subagent.

A fork's title is its source's until someone renames it (it copied the source's title, or
both are named by the same first question, or an importer named it by the first question
it shares with its source), so such a fork is shown as
"<source title> — fork N", N counting the source's forks in the order they were made. A
fork that asked something else first, or was renamed, keeps its own title.

Qt-free: it reads summaries (the client catalogue's shape) through two lookups, the
lineage tree model's `summary` and `children_of`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from forkwise.core.reading.entries import names_question

if TYPE_CHECKING:
    from forkwise.core.client.rows import SessionRow
#: a session nothing was asked in yet (its id is in the row's tooltip)
UNTITLED = "New session"
Summary = Callable[[str], "SessionRow | None"]
Children = Callable[[str | None], list[str]]


def is_fork(summary: SessionRow) -> bool:
    relation = summary["relation"]
    return bool(summary["parentSession"]) and relation in (None, "fork")


def forks_of(source: str, summary: Summary, children_of: Children) -> list[str]:
    """The source's forks (not its subagents), oldest first."""
    rows = [(s, sid) for sid in children_of(source) if (s := summary(sid)) is not None]
    forks = [(s["created"] or "", sid) for s, sid in rows
             if is_fork(s) and s["parentSession"] == source]
    return [sid for _created, sid in sorted(forks)]


def siblings(sid: str, summary: Summary, children_of: Children) -> list[str]:
    """`sid` and the other forks of its source at the same point, oldest first; [] when
    `sid` is not a fork."""
    own = summary(sid)
    if own is None or not is_fork(own):
        return []
    source = str(own["parentSession"])
    point = own["seedLength"]
    return [other for other in forks_of(source, summary, children_of)
            if (row := summary(other)) is not None and row["seedLength"] == point]


def position(sid: str, summary: Summary, children_of: Children) -> tuple[int, int] | None:
    """(1-based place, count) of `sid` among its siblings; None when it has none."""
    found = siblings(sid, summary, children_of)
    if len(found) < 2 or sid not in found:
        return None
    return found.index(sid) + 1, len(found)


def step(sid: str, delta: int, summary: Summary, children_of: Children) -> str | None:
    """The sibling `delta` places away (no wrapping round); None past either end."""
    found = siblings(sid, summary, children_of)
    if sid not in found:
        return None
    target = found.index(sid) + delta
    return found[target] if 0 <= target < len(found) else None


def display_title(sid: str, summary: Summary, children_of: Children, depth: int = 0) -> str:
    """The title a row shows: a fork that still carries its source's title is named
    after the source and its number among the source's forks."""
    own = summary(sid)
    if own is None:
        return sid
    title = own["title"] or sid
    if (title == sid and not own["titleSet"] and not own["firstQuestion"]
            and not own["error"]):  # an unreadable one is not new
        title = UNTITLED  # the host names it by its id until something is asked
    parent = own["parentSession"]
    if not is_fork(own) or not isinstance(parent, str) or depth > 20:
        return title
    source = summary(parent)
    if source is None or not _inherited(own, source):
        return title  # renamed, or it asked something else first: its own title says it
    forks = forks_of(parent, summary, children_of)
    number = forks.index(sid) + 1 if sid in forks else len(forks) + 1
    return f"{display_title(parent, summary, children_of, depth + 1)} — fork {number}"


def _inherited(own: SessionRow, source: SessionRow) -> bool:
    """Whether a fork's title is its source's: a title copied with the seed (a
    `session/title` event), or the first question when the seed holds that question (the
    fork asked nothing of its own first)."""
    question = own["firstQuestion"]
    shared = question is not None and question == source["firstQuestion"]
    if own["titleSet"]:
        title = own["title"] or ""
        if (source["title"] or "") == title:
            return True
        # an importer names an untitled fork by its first question (a Claude Code rewind
        # whose rename comes after the fork point, a Codex fork without a thread name):
        # when that question is its source's too, the title says nothing of its own
        return shared and names_question(title, str(question))
    return shared

