"""A session as GitHub-flavoured Markdown, from the same items and cards as the HTML:
fenced code with its language, ```diff for edits, `- [x]` checklists, `<details>` for
folds, images as data URIs (or files beside the document, `assets`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forkwise.core.log.prompts import read_prompt

from .cards import Card, Section, card_of
from .document import Document, items, shown_title
from .entries import ASSISTANT, FORK, MODEL, REASONING, SUMMARY, TOOL, TURN_END, USER, Entry
from .images import Image
from .markup import language_of
from .render import PASTED

_TICKS = re.compile(r"`{3,}")
_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


@dataclass
class MarkdownOut:
    """The document's text, and (with assets) the image files it refers to."""

    text: str
    assets: list[tuple[str, bytes]] = field(default_factory=list)  # (relative path, bytes)


def fence(body: str, language: str = "") -> str:
    """A fenced block that the body's own backticks cannot close."""
    # (a body without three backticks in a row is most of them: not searched)
    longest = max((len(m) for m in _TICKS.findall(body)), default=2) if "```" in body else 2
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{body.rstrip(chr(10))}\n{ticks}\n"


def code_span(text: str) -> str:
    """Inline code that the text's own backticks cannot close."""
    flat = " ".join(text.split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0) if "`" in flat else 0
    ticks = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"


class _Writer:
    def __init__(self, assets_dir: str | None) -> None:
        self.assets_dir = assets_dir
        self.assets: list[tuple[str, bytes]] = []

    def image(self, image: Image, alt: str) -> str:
        if self.assets_dir is None:
            return f"![{alt}]({image.data_uri()})\n"
        name = f"{self.assets_dir}/image-{len(self.assets) + 1}.{_EXT.get(image.mime, 'img')}"
        self.assets.append((name, image.data()))
        return f"![{alt}]({name})\n"

    def pasted(self, entry: Entry) -> str:
        return "".join("\n" + self.image(i, PASTED) for i in entry.images)

    def section(self, section: Section) -> str:
        if section.kind == "diff" and section.diff is not None:
            body = fence(section.diff.unified(), "diff")
        elif section.kind == "checklist":
            body = "".join(
                f"- [{'x' if status == 'completed' else ' '}] {text}"
                f"{' (in progress)' if status == 'in_progress' else ''}\n"
                for status, text in section.items)
        elif section.kind == "markdown":
            body = section.text.rstrip() + "\n"
        else:
            language = section.language or language_of(section.filename)
            body = fence(section.text, language)
        if section.folded:
            return details(section.fold_label(), body)
        return (f"*{section.label}*\n\n" if section.label else "") + body

    def card(self, card: Card) -> str:
        failed = " — **failed**" if card.failed else ""
        link = f" → subagent session `{card.link}`" if card.link else ""
        # a title that starts with the tool's name says it once
        tool = "" if card.title.startswith(card.tool) else f"**{card.tool}** "
        note = f" — {card.note}" if card.note else ""
        out = [f"{tool}{code_span(card.title)}{failed}{note}{link}\n"]
        out.extend(self.section(s) for s in card.sections)
        out.extend(self.image(i, f"{card.tool} result image") for i in card.images)
        return "\n".join(out)

    def entry(self, entry: Entry, card: Card | None) -> str:
        kind = entry.kind
        if kind == USER:
            prompt = read_prompt(entry.text)
            folded = "".join(details(label, fence(text)) for label, text in prompt.folded)
            return f"### You\n\n{prompt.text}\n\n{folded}{self.pasted(entry)}"
        if kind == ASSISTANT:
            return f"### Assistant\n\n{entry.text}\n{self.pasted(entry)}"
        if kind == REASONING:
            return details("Reasoning", entry.text)
        if card is not None:
            return self.card(card)
        if kind == TURN_END and entry.text != "completed":
            why = f": {entry.data['error']}" if entry.data.get("error") else ""
            return f"*Turn {entry.text}{why}*\n"
        if kind == FORK:
            source = entry.data.get("source") or "its source"
            return f"---\n\n*Forked from `{source}` here (after event {entry.seq - 1})*\n"
        if kind == MODEL:
            return f"*Model: {entry.text}*\n"
        if kind == SUMMARY:
            return details("Summary of the earlier conversation", entry.text)
        return ""


def entry_markdown(entry: Entry) -> str:
    """One entry as Markdown (a message's Copy as Markdown); images as data URIs."""
    return _Writer(None).entry(entry, card_of(entry) if entry.kind == TOOL else None)


def to_markdown(doc: Document, assets_dir: str | None = None) -> MarkdownOut:
    """The session as Markdown; `assets_dir` (relative to the document): images go there
    as files instead of data URIs."""
    writer = _Writer(assets_dir)
    parts = [f"# {shown_title(doc)}\n", f"*session `{doc.session_id}`"
             + (f" · imported from {doc.agent}" if doc.agent else "")
             + (f" · `{doc.cwd}`" if doc.cwd else "")
             + (f" · a fork of `{doc.parent_session}`" if doc.parent_session else "") + "*\n"]
    for item in items(doc):
        if item.entry is not None:
            text = writer.entry(item.entry, item.card)
            if text:
                parts.append(text)
        elif item.card is not None:
            parts.append(writer.card(item.card))
    return MarkdownOut("\n".join(parts), writer.assets)
