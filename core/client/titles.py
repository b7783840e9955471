"""What a session is called in a list: the one rule, for the CLI's listing and the app's
list alike.

A fork's title is its source's until someone renames it (it copied the source's title, or
both are named by the same first question — a source titled by its header alone passes
that question on — or an importer named it by the first question it shares with its
source), so such a fork is called "<source title> — fork N", N counting the source's forks
in the order they were made. A fork that asked something else first, or was renamed, keeps
its own title.

The rule reads summary rows (`SessionRow`) through two lookups, `summary` and
`children_of`: the app's lineage model answers them from its tree, `titles` from a listing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from forkwise.core.client.rows import SessionRow
from forkwise.core.log.prompts import names_question

#: a session nothing was asked in yet (its id is in the row's tooltip)
UNTITLED = "New session"
#: the relation of a session a Continue in wrote and an import read back
CONTINUED = "continued"
#: how the importer names such a session after its source: "<title> — continued in Codex"
_CONTINUED_IN = " — continued in "
Summary = Callable[[str], "SessionRow | None"]
Children = Callable[[str | None], list[str]]
#: a fork's first question of its own (after its seed), when known
Asked = Callable[[str], "str | None"]
#: how much of that question a title keeps (the row's tooltip has the title whole)
QUESTION_CHARS = 100


def is_fork(summary: SessionRow) -> bool:
    relation = summary["relation"]
    return bool(summary["parentSession"]) and relation in (None, "fork")


def forks_of(source: str, summary: Summary, children_of: Children) -> list[str]:
    """The source's forks (not its subagents), oldest first."""
    rows = [(s, sid) for sid in children_of(source) if (s := summary(sid)) is not None]
    forks = [(s["created"] or "", sid) for s, sid in rows
             if is_fork(s) and s["parentSession"] == source]
    return [sid for _created, sid in sorted(forks)]


def display_title(sid: str, summary: Summary, children_of: Children, depth: int = 0,
                  asked: Asked | None = None) -> str:
    """The title a row shows: a fork that still carries its source's title is named
    after the source and its number among the source's forks — or, when `asked` knows
    the first question it asked of its own (an edit and resend, a rewound branch), after
    that question: "<question> — fork N", so that branches of one point read apart."""
    own = summary(sid)
    if own is None:
        return sid
    title = _own_title(sid, own)
    parent = own["parentSession"]
    if not isinstance(parent, str) or depth > 20:
        return title
    if own["relation"] == CONTINUED:
        return _continued(title, parent, summary, children_of, depth, asked=asked)
    if not is_fork(own):
        return title
    source = summary(parent)
    if source is None or not inherited(own, source):
        return title  # renamed, or it asked something else first: its own title says it
    forks = forks_of(parent, summary, children_of)
    number = forks.index(sid) + 1 if sid in forks else len(forks) + 1
    question = " ".join((asked(sid) or "").split()) if asked is not None else ""
    if question:
        return f"{question[:QUESTION_CHARS]} — fork {number}"
    named = display_title(parent, summary, children_of, depth + 1, asked)
    return f"{named} — fork {number}"


def _own_title(sid: str, own: SessionRow) -> str:
    """The title a session has of its own: its row's, else "New session" while nothing
    was asked in it (the host names it by its id until then)."""
    title = own["title"] or sid
    if (title == sid and not own["titleSet"] and not own["firstQuestion"]
            and not own["error"]):  # an unreadable one is not new
        return UNTITLED
    return title


def _continued(
    title: str, parent: str, summary: Summary, children_of: Children, depth: int, *,
    asked: Asked | None,
) -> str:
    """A session a Continue in wrote, read back, is named after the session it goes on
    from ("<title> — continued in Codex"): it follows what that session is called now
    (a fork's number, a rename)."""
    source = summary(parent)
    stored = source["title"] if source is not None else ""
    if not stored or not title.startswith(f"{stored}{_CONTINUED_IN}"):
        return title
    return display_title(parent, summary, children_of, depth + 1, asked) + title[len(stored):]


def inherited(own: SessionRow, source: SessionRow) -> bool:
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


def titles(rows: Iterable[SessionRow]) -> dict[str, str]:
    """Each listed session's id → the title a list shows for it (`display_title`)."""
    by_id = {row["id"]: row for row in rows}
    children: dict[str | None, list[str]] = {}
    for sid, row in by_id.items():
        parent = row["parentSession"]
        children.setdefault(parent if parent in by_id else None, []).append(sid)
    summary, children_of = by_id.get, lambda p: children.get(p, [])
    # a session without a source (most of a store) has its own title: no call through
    # the lookups (10,000 rows: about half the time of the whole rule)
    return {sid: (display_title(sid, summary, children_of)
                  if isinstance(row["parentSession"], str) else _own_title(sid, row))
            for sid, row in by_id.items()}
