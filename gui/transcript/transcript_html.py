"""The rich text of a transcript entry, as its card shows it (transcript_delegate paints
it). The body comes from the one renderer (forkwise.core.reading.render: Markdown,
highlighted code, a tool call as the card of its kind, failed calls marked), with folds
off; the transcript folds its own way: a tool card's long parts show their first
`RESULT_LINES` lines until it is unfolded (a click, or Enter or Space on its row).
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Any

import orjson
from PySide6.QtGui import QPalette

from forkwise.core.reading.cards import Card, Section, card_of
from forkwise.core.reading.entries import (
    APPROVAL,
    ASSISTANT,
    FORK,
    MODEL,
    REASONING,
    STREAM,
    SUMMARY,
    TITLE,
    TOOL,
    TURN_END,
    USER,
    Entry,
)
from forkwise.core.reading.images import Image
from forkwise.core.reading.markup import markdown
from forkwise.core.reading.render import (
    PASTED,
    ImageSource,
    card_html,
    has_noise,
    image_html,
    text_html,
)
from forkwise.core.reading.usage_words import part_line
from forkwise.gui.models.session_rows import format_when
from forkwise.gui.models.transcript_model import plain_text

RESULT_LINES = 6
#: an edit's diff shows this many rows until unfolded
DIFF_LINES = 20


def dim_colour(pal: QPalette) -> str:
    return pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()



NO_PROVIDER_HINT = ("Session → Use the model from Preferences switches to the model chosen "
                    "there and offers to ask again")


def json_text(value: Any) -> str:
    """Compact JSON when it fits on a line, indented when it does not."""
    if isinstance(value, str):
        return value
    try:
        compact = orjson.dumps(value).decode()
        if len(compact) <= 100:
            return compact
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return repr(value)


def _lines(section: Section) -> int:
    if section.kind == "diff" and section.diff is not None:
        return len(section.diff.lines)
    return len(section.text.splitlines()) if section.kind in ("code", "text") else 0


def _limit(section: Section) -> int:
    return DIFF_LINES if section.kind == "diff" else RESULT_LINES


def hidden_lines(card: Card) -> int:
    """How many lines of a card a fold hides (0: it has nothing to fold)."""
    return sum(max(0, _lines(s) - _limit(s)) for s in card.sections)


def _folded(card: Card) -> Card:
    """The card with its long parts cut to their first lines, each cut part followed by
    how many lines it hides (a written file's fold read as if it hid the result below it)."""
    sections = []
    for section in card.sections:
        limit = _limit(section)
        if _lines(section) <= limit:
            sections.append(section)
            continue
        if section.kind == "diff" and section.diff is not None:
            sections.append(replace(section, diff=replace(section.diff,
                                                          lines=section.diff.lines[:limit])))
        else:
            sections.append(replace(section, text="\n".join(section.text.splitlines()[:limit])))
        hidden = _lines(section) - limit
        sections.append(Section("note", f"… {hidden} more lines — click to show"))
    return replace(card, sections=sections)


def foldable(entry: Entry) -> bool:
    """A reasoning, a prompt with system noise around it (a reminder, a caveat), or a tool
    call with more lines than its card shows folded."""
    if entry.kind == REASONING:
        return True
    if entry.kind == USER:
        return has_noise(entry)
    return entry.kind == TOOL and hidden_lines(card_of(entry)) > 0


def no_image(_image: Image) -> str:
    """An image's name where no thumbnails are made (never its data URI: Qt would decode
    it on the GUI thread): it shows as a broken image."""
    return "forkwise-image:"


def tool_html(entry: Entry, src: ImageSource = no_image) -> str:
    card = card_of(entry)
    hidden = hidden_lines(card)
    out = [card_html(card if entry.expanded or not hidden else _folded(card), folds=False,
                     src=src)]
    if not entry.has_result and card.pending:
        out.append('<p class="dim"><i>no result yet</i></p>')
    if hidden and entry.expanded:
        out.append('<p class="dim"><i>click to fold</i></p>')
    return "".join(out)


def entry_html(entry: Entry, pal: QPalette, src: ImageSource = no_image) -> str:
    """The rich text of one entry (escaped: session text is never interpreted as HTML);
    `src` names its images (gui/transcript/thumbnails)."""
    kind = entry.kind
    when = format_when(entry.ts)
    origin = ' <span class="dim">· copied from the source</span>' if entry.origin else ""
    if kind in (USER, ASSISTANT, STREAM):
        speaker = {"user": "You", "assistant": "Assistant", "stream": "Assistant"}[kind]
        status = ' <span class="dim">· writing…</span>' if kind == STREAM else ""
        # a prompt's system noise (reminders, caveats) a line each until it is unfolded
        body = (text_html(entry, folds=False, shut=not entry.expanded) if kind != STREAM
                else markdown(entry.text))
        body += "".join(image_html(i, PASTED, src) for i in entry.images)
        # the text in a block of its own: its paragraphs and code blocks set apart (`.md`)
        return (f'<p><b>{speaker}</b> <span class="dim">{when}</span>{origin}{status}</p>'
                f'<div class="md">{body or "<p><i>(no text)</i></p>"}</div>')
    if kind == REASONING:
        words = len(entry.text.split())
        if not entry.expanded:
            return (f'<p class="dim"><i>▸ Reasoning ({words} words) — click to show</i></p>')
        return (f'<p class="dim"><i>▾ Reasoning — click to hide</i></p>'
                f'<div class="dim md" style="margin-top: 4px">{markdown(entry.text)}</div>')
    if kind == TOOL:
        return (f'<p class="dim"><small>tool call · {when}</small></p>'
                f"{tool_html(entry, src)}")
    if kind == APPROVAL:
        decision = entry.decision
        tool = html.escape(entry.approval_tool)
        word = {"approved": "✓ Approved", "denied": "✕ Denied", "expired": "Not answered"}.get(
            str(decision), str(decision))
        return f'<p>{word}: <b>{tool}</b> <span class="dim">{when}</span></p>'
    if kind == TURN_END:
        colour = {"completed": dim_colour(pal), "cancelled": "#b36b00", "failed": "#c0392b",
                  "interrupted": "#b36b00"}.get(entry.text, dim_colour(pal))
        spent = entry.turn_usage  # the turn's tokens and cost, when recorded
        cost = f" · {html.escape(part_line(spent))}" if spent else ""
        line = (f'<p align="center" style="color: {colour}"><small>— turn '
                f'{html.escape(entry.text)} · {when}{cost} —</small></p>')
        error = entry.turn_error
        if not error:
            return line
        hint = (f"<br>{html.escape(NO_PROVIDER_HINT)}" if "provider" in error else "")
        return (line + f'<p align="center" style="color: {colour}"><small>'
                f"{html.escape(error)}{hint}</small></p>")
    if kind == FORK:
        return f"<p>{html.escape(plain_text(entry))}</p>"
    if kind == MODEL:
        return f'<p align="center" class="dim"><small>Model: {html.escape(entry.text)}</small></p>'
    if kind == TITLE:
        return f'<p align="center" class="dim"><small>Title: {html.escape(entry.text)}</small></p>'
    if kind == SUMMARY:
        return (f'<p><b>Earlier context summarised</b></p>'
                f'<div class="dim md">{markdown(entry.text)}</div>')
    return f"<p>{html.escape(plain_text(entry))}</p>"
