"""A session as a document to share: one self-contained HTML file, or GitHub Markdown.

The session's events are folded by the transcript's fold (`entries.build`), tool calls become
cards (`cards.card_of`) and images are taken where the importers kept them; the HTML is
drawn by the transcript's renderer (`render`). A fork's log holds its whole history from
the root (a fork copies its source's events), so the document shows it all, with the fork
point marked where the `history/fork` event stands. Nothing in the HTML is loaded from
elsewhere: the style sheet is inline, images are data URIs, there is no script.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from forkwise.core.log.prompts import title_text

from .cards import Card, card_of, plugin_card
from .entries import TOOL, Entry, build
from .markup import CODE_CSS
from .render import card_html, entry_html, esc

Json = dict[str, Any]

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 60em;
       margin: 2em auto; padding: 0 1em; color: #1f2328; line-height: 1.5; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1em; }
.meta { color: #57606a; font-size: 90%; }
.msg { margin: 1em 0; }
.msg.user { background: #f6f8fa; border-radius: 6px; padding: 0.2em 0.8em; }
pre { overflow-x: auto; border-radius: 6px; padding: 6px 8px; margin: 4px 0; }
code { border-radius: 3px; padding: 0 0.2em; }
pre code { padding: 0; font-family: inherit; font-size: inherit; }
table { border-color: #d0d7de; }
table.diff td { padding: 0 4px; }
details { margin: 0.3em 0; }
summary { cursor: pointer; color: #57606a; }
img { border: 1px solid #d0d7de; }
hr.fork { border: 0; border-top: 2px dashed #bf8700; }
.fork-point { color: #9a6700; }
"""


@dataclass
class Document:
    """What the export needs of a session beyond its events."""

    session_id: str
    title: str
    events: Sequence[Json]
    cwd: str = ""
    created: str = ""
    agent: str | None = None  # the tool it was imported from
    parent_session: str | None = None
    seed_length: int = 0
    subagents: Mapping[str, str] = field(default_factory=dict)  # agent id -> session id


@dataclass
class Item:
    """One thing the document shows, in order: an entry (a tool entry with its card), or
    the card of a tool the agent ran itself (no entry). Images are their entry's (the
    fold puts a pasted image with its prompt, a tool result's with its call)."""

    entry: Entry | None = None
    card: Card | None = None


def items(doc: Document) -> Iterator[Item]:
    """The entries of the transcript fold in log order, with the cards of the tools the
    agent ran itself placed by their position."""
    builder = build(doc.events, doc.parent_session, doc.seed_length)
    loose: list[tuple[int, Item]] = []
    for event in doc.events:
        ran = plugin_card(event)
        if ran is not None:
            loose.append((int(event.get("seq", 0)), Item(card=ran)))
    at = 0
    for entry in builder.entries:
        while at < len(loose) and loose[at][0] < entry.seq:
            yield loose[at][1]
            at += 1
        card = card_of(entry, doc.subagents) if entry.kind == TOOL else None
        yield Item(entry, card)
    for _seq, item in loose[at:]:
        yield item


def shown_title(doc: Document) -> str:
    return title_text(doc.title) if doc.title else doc.session_id


def to_html(doc: Document) -> str:
    """One self-contained HTML file of the session."""
    return "".join(html_parts(doc))


def html_bytes(doc: Document) -> bytes:
    """`to_html` as the UTF-8 the file holds, each part encoded alone: most are ASCII,
    which encodes as a copy, where the whole page (a few characters beyond ASCII) is
    transcoded character by character (3 against 14 ms for a 12 MB page)."""
    return b"".join([part.encode("utf-8") for part in html_parts(doc)])


def html_parts(doc: Document) -> list[str]:
    """The page in pieces: its head, each item, its end."""
    title = shown_title(doc)
    meta = [f"session {doc.session_id}"]
    if doc.agent:
        meta.append(f"imported from {doc.agent}")
    if doc.cwd:
        meta.append(doc.cwd)
    if doc.created:
        meta.append(doc.created)
    if doc.parent_session:
        meta.append(f"a fork of {doc.parent_session} (after event {doc.seed_length})")
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n",
        f"<title>{esc(title)}</title>\n<style>{STYLE}{CODE_CSS}\n</style>\n</head>\n<body>\n",
        f'<header id="session-{esc(doc.session_id)}"><h1>{esc(title)}</h1>\n',
        f'<p class="meta">{" · ".join(esc(m) for m in meta)}</p></header>\n<main>\n',
    ]
    for item in items(doc):
        if item.entry is not None:
            parts.append(entry_html(item.entry, item.card, folds=True))
        elif item.card is not None:
            parts.append(card_html(item.card, folds=True))
    parts.append("</main>\n</body>\n</html>\n")
    return parts
