"""What a transcript row links to beyond itself, provided from outside the view.

The view cannot know the session tree (a Task call's subagent, the forks cut after a
message) nor read another session (a fork's anchor text); whoever can hands the view a
`RowLinks` through the window's interface (`Bench.link_rows`). Each hook has one provider.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: the subagent session the tool call at a transcript row started, or None
SubagentOf = Callable[[int], "str | None"]
#: the forks cut right after a transcript row, oldest first
ForksAt = Callable[[int], "list[str]"]
#: asks for the text of message `anchor` of session `source` just after event `boundary`
#: and hands it to the callback (a fork cut before that message: its words are the source's)
AnchorText = Callable[[str, int, str, Callable[[str], None]], None]


@dataclass(frozen=True)
class RowLinks:
    """Providers for the row links; a None field leaves that hook as it is."""

    subagent_of: SubagentOf | None = None
    forks_at: ForksAt | None = None
    anchor_text: AnchorText | None = None


@dataclass
class RowLinkHooks:
    """The providers a view holds: each set at most once (a second provider for the same
    hook would silently replace the first one's links)."""

    subagent_of: SubagentOf | None = None
    forks_at: ForksAt | None = None
    anchor_text: AnchorText | None = None

    def take(self, links: RowLinks) -> None:
        """Keep `links`' providers; one already held for the same hook is an error."""
        self.subagent_of = _once("subagent_of", self.subagent_of, links.subagent_of)
        self.forks_at = _once("forks_at", self.forks_at, links.forks_at)
        self.anchor_text = _once("anchor_text", self.anchor_text, links.anchor_text)


def _once(name: str, held: T | None, given: T | None) -> T | None:
    if given is None:
        return held
    if held is not None:
        raise ValueError(f"the transcript's {name} is provided already")
    return given
