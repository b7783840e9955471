"""Forks of one source at one point, and what tells them apart.

Sessions forked from the same source (`parentSession`) at the same point (`seedLength`)
are siblings: the transcript steps between them ("2/3" with arrows). The source itself is not one
of them (it is reached through the "Forked from" link), nor is a subagent.

What a fork is called ("<source title> — fork N" until it is renamed) is decided once, in
forkwise.core.client.titles, for the CLI's listing and this list alike.

Qt-free: it reads summaries (the client catalogue's shape) through two lookups, the
lineage tree model's `summary` and `children_of`.
"""

from __future__ import annotations

from forkwise.core.client.titles import (
    Children,
    Summary,
    display_title,
    forks_of,
    is_fork,
)

__all__ = ["display_title", "forks_of", "position", "siblings", "step"]


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
