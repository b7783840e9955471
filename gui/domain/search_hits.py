"""The search panel's rules (Qt-free): hits grouped by session (the title once), narrowed
by agent, date and role, and snippets read as plain words.

The host's snippet is the indexed text around the words, whitespace folded, the words
between « and »: the text as typed, so Markdown (`**`, backticks, headings, links,
tables), a slash command's tags, and a tool call's JSON arguments (with `\\n` escapes)
showed as such. `clean_snippet` leaves the words and the marks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

Hit = Mapping[str, Any]

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\\[ntr]"), " "),  # JSON escapes of a tool call's arguments
    (re.compile(r'"\s*,\s*"'), '", "'),  # between a JSON object's members
    (re.compile(r'"([\w-]+)"\s*:\s*'), r"\1: "),  # a JSON key
    (re.compile(r'[{}"]+(?=[^\w«]|$)|(?<![\w»])[{}"]+'), ""),  # JSON's braces and quotes
    (re.compile(r"</?[A-Za-z][\w«»-]*>"), " "),  # tags (<command-name>, <system-reminder>)
    (re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)"), r"\1"),  # a link or image: its words
    (re.compile(r"(?:\|\s*:?-{3,}:?\s*)+\|?"), " "),  # a table's rule
    (re.compile(r"\s\|\s|^\|\s|\s\|$"), " · "),  # a table's cells
    (re.compile(r"(?:\s*·){2,}\s*"), " · "),
    (re.compile(r"(?:^|(?<=\s))(?:#{1,6}|>)(?=\s)"), " "),  # a heading's or quote's mark
    (re.compile(r"\*\*|__|~~|`+"), ""),  # strong, strikethrough, code
    (re.compile(r"(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])"), ""),  # *emphasis*
    (re.compile(r"(?<!\w)_(?=[^\s_])|(?<=[^\s_])_(?!\w)"), ""),  # _emphasis_
    (re.compile(r"\s{2,}"), " "),
]


def clean_snippet(snippet: str) -> str:
    """The snippet as plain words: markup and JSON punctuation gone, « » kept."""
    text = snippet
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text.strip(" ·")


def marked_words(snippet: str) -> list[str]:
    """The words the host marked in a snippet (what a hit found), each once."""
    seen: dict[str, None] = {}
    for word in re.findall(r"«([^«»]+)»", snippet):
        seen.setdefault(word.casefold(), None)
    return list(seen)


#: the date filter's choices: (label, days back; None: any time)
DATES: list[tuple[str, int | None]] = [
    ("Any time", None), ("Past day", 1), ("Past 7 days", 7), ("Past 30 days", 30),
    ("Past year", 365)]
#: the role filter's choices: (label, the hit kind; None: any)
ROLES: list[tuple[str, str | None]] = [
    ("Anyone", None), ("You", "user"), ("Assistant", "assistant"), ("Titles", "title")]


@dataclass(frozen=True)
class Filters:
    """What narrows the hits: the agent a session came from ("forkwise" for the app's
    own), how many days back, the kind of text (user, assistant, title), the folder the
    session worked in."""

    agent: str | None = None
    days: int | None = None
    role: str | None = None
    #: the working folder a session ran in (its whole path)
    folder: str | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.agent, self.days, self.role, self.folder))

    def keeps(self, hit: Hit, agent_of: Callable[[str], str], now: datetime,
              folder_of: Callable[[str], str] = lambda _sid: "") -> bool:
        if self.role is not None and hit.get("kind") != self.role:
            return False
        if self.agent is not None and agent_of(str(hit.get("sessionId"))) != self.agent:
            return False
        if self.folder is not None and folder_of(str(hit.get("sessionId"))) != self.folder:
            return False
        if self.days is not None:
            when = _when(str(hit.get("ts") or ""))
            if when is None or when < now - timedelta(days=self.days):
                return False
        return True


def _when(ts: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass
class Group:
    """A session's hits, in the order found (the latest first)."""

    session_id: str
    title: str
    hits: list[Hit] = field(default_factory=list)


def grouped(hits: Iterable[Hit]) -> list[Group]:
    """The hits by session, sessions in the order of their first hit."""
    groups: dict[str, Group] = {}
    for hit in hits:
        sid = str(hit.get("sessionId"))
        group = groups.get(sid)
        if group is None:
            group = groups[sid] = Group(sid, str(hit.get("title") or sid))
        group.hits.append(hit)
    return list(groups.values())
