"""Forks of one source at one point, and what tells them apart.

Sessions forked from the same source (`parentSession`) at the same point (`seedLength`)
are siblings: the transcript steps between them ("2/3" with arrows). The source counts as
the first of them when its own log goes on past that point (the original, as chat apps'
version arrows count it); a subagent is none of them.

What a fork is called ("<source title> — fork N" until it is renamed) is decided once, in
forkwise.core.client.titles, for the CLI's listing and this list alike.

Qt-free: it reads summaries (the client catalogue's shape) through two lookups, the
lineage tree model's `summary` and `children_of`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forkwise.core.client.titles import (
    Children,
    Summary,
    display_title,
    forks_of,
    is_fork,
)

if TYPE_CHECKING:
    from forkwise.core.client.rows import SessionRow

__all__ = ["display_title", "forks_of", "position", "siblings", "step"]


def siblings(sid: str, summary: Summary, children_of: Children) -> list[str]:
    """The versions of what follows a fork point, as chat apps count them ("< 2/3 >" on an
    edited message): the source first when its own log goes on past the point (the
    original), then its forks at that point, oldest first. [] when `sid` is not a fork."""
    own = summary(sid)
    if own is None or not is_fork(own):
        return []
    source = str(own["parentSession"])
    point = own["seedLength"]
    forks = [other for other in forks_of(source, summary, children_of)
             if (row := summary(other)) is not None and row["seedLength"] == point]
    return [source, *forks] if goes_on(summary(source), point) else forks


def goes_on(source: SessionRow | None, point: int | None) -> bool:
    """Whether the source has events of its own past the fork point: the original
    version of what its forks there replaced (a source forked at its end has none)."""
    return source is not None and isinstance(point, int) and source["events"] > point


def position(sid: str, summary: Summary, children_of: Children) -> tuple[int, int] | None:
    """(1-based place, count) of `sid` among the versions at its fork point; None when it
    is the only one. The original (its source) is 1 when it goes on past the point."""
    found = siblings(sid, summary, children_of)
    if len(found) < 2 or sid not in found:
        return None
    return found.index(sid) + 1, len(found)


def step(sid: str, delta: int, summary: Summary, children_of: Children) -> str | None:
    """The version `delta` places away (no wrapping round): a fork, or the source (the
    original); None past either end."""
    found = siblings(sid, summary, children_of)
    if sid not in found:
        return None
    target = found.index(sid) + delta
    return found[target] if 0 <= target < len(found) else None
