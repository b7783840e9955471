"""Entries and tool cards as HTML: the one renderer the transcript and the exports share.

Every element carries the inline style it needs (Qt's rich text reads those, and the
export reads well with no style sheet at all) and a class (the export's style sheet
refines the look in a browser). Folds are `<details>` when `folds` is on (the export); the
transcript folds its own way and asks for the content open.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable

from forkwise.core.log.prompts import read_prompt

from .cards import Card, Section
from .diffs import ADDED, HUNK, REMOVED, FileDiff
from .entries import (
    APPROVAL,
    ASSISTANT,
    FORK,
    MODEL,
    REASONING,
    SUMMARY,
    TOOL,
    TURN_END,
    USER,
    Entry,
)
from .images import Image
from .markup import PRE_STYLE, code_block, highlight, markdown
from .usage_words import part_line

ROW_STYLE = {
    REMOVED: "background-color:#ffebe9; color:#82071e;",
    ADDED: "background-color:#e6ffec; color:#116329;",
    HUNK: "background-color:#ddf4ff; color:#57606a;",
}
_MONO = "font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;"
#: a line number's cell: never wrapped (Qt broke "122" into a digit per line in the
#: narrow column, the diff's rows two or three lines high)
_LN = "color:#8c959f; text-align:right; padding:0 4px; white-space:nowrap;"
_CHECK = {"completed": "☑", "in_progress": "◐", "pending": "☐"}


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def fold(summary: str, body: str, folds: bool, open_: bool = False) -> str:
    if not folds:
        return f'<p style="color:#57606a;"><b>{esc(summary)}</b></p>\n{body}'
    return (f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>\n"
            f"{body}</details>\n")


def diff_table(diff: FileDiff) -> str:
    """A unified diff as a table: old and new line numbers, then the line, rows
    coloured by kind (class `removed`, `added`, `hunk`, `context`)."""
    rows = []
    for line in diff.lines:
        style = ROW_STYLE.get(line.kind, "")
        old = "" if line.old is None else str(line.old)
        new = "" if line.new is None else str(line.new)
        text = esc(line.text) if line.kind == HUNK else esc(line.mark + line.text)
        rows.append(
            f'<tr class="{line.kind}" style="{style}"><td class="ln" width="1%" style="{_LN}">'
            f'{old}</td><td class="ln" width="1%" style="{_LN}">{new}</td><td'
            f' style="white-space:pre-wrap; {_MONO}">{text}</td></tr>'
        )
    return ('<table class="diff" width="100%" cellspacing="0" cellpadding="0" style="border-'
            'collapse:collapse; width:100%; font-size:90%;">\n' + "\n".join(rows) + "\n</table>\n")


def checklist(items: Iterable[tuple[str, str]]) -> str:
    lis = []
    for status, text in items:
        mark = _CHECK.get(status, "☐")
        shown = f"<s>{esc(text)}</s>" if status == "completed" else esc(text)
        if status == "in_progress":
            shown = f"<b>{shown}</b>"
        lis.append(f'<li class="todo {esc(status)}">{mark} {shown}</li>')
    return '<ul class="checklist" style="list-style:none;">\n' + "\n".join(lis) + "\n</ul>\n"


def section_html(section: Section, folds: bool) -> str:
    if section.kind == "diff" and section.diff is not None:
        body = diff_table(section.diff)
    elif section.kind == "checklist":
        body = checklist(section.items)
    elif section.kind == "markdown":
        body = markdown(section.text)
    elif section.kind == "code":
        body = code_block(section.text, section.language, section.filename)
    elif section.kind == "note":
        return _note(section.text, "dim")
    else:
        body = f'<pre style="{PRE_STYLE}">{esc(section.text)}</pre>\n'
    label = section.label
    if section.folded:
        return fold(section.fold_label(), body, folds)
    if label and section.kind not in ("code", "diff"):
        return f'<div class="label" style="color:#57606a;">{esc(label)}</div>\n{body}'
    return body


#: how an image is referred to: its data URI in a document; the app names a thumbnail
ImageSource = Callable[[Image], str]
PASTED = "pasted image"


def image_html(image: Image, alt: str = "image", src: ImageSource = Image.data_uri) -> str:
    return (f'<p class="image"><img src="{src(image)}" alt="{esc(alt)}"'
            ' style="max-width:100%;" /></p>\n')


def card_html(card: Card, folds: bool = True, src: ImageSource = Image.data_uri) -> str:
    """A tool card: its title line (monospace), its sections, its images."""
    state = ' <span class="failed" style="color:#cf222e;"><b>failed</b></span>' if (
        card.failed) else ""
    # the subagent's session by its id (the app opens it; a document names it)
    link = (f' <span class="subagent" style="font-weight:normal;">→ subagent session'
            f" {esc(card.link)}</span>" if card.link else "")
    if card.kind == "shell":
        title = highlight(card.title, "console")
    elif card.title.startswith(card.tool):
        title = esc(card.title)
    else:  # which tool, then what it worked on
        title = f'<span class="tool-name" style="color:#57606a;">{esc(card.tool)}</span> '
        title += esc(card.title)
    head = (f'<div class="tool-title" style="{_MONO} font-weight:bold;">{title}'
            f"{state}{link}</div>\n")
    if card.note:
        head += f'<div class="note" style="color:#57606a;">{esc(card.note)}</div>\n'
    body = "".join(section_html(s, folds) for s in card.sections)
    body += "".join(image_html(i, f"{card.tool} result image", src) for i in card.images)
    colour = "#cf222e" if card.failed else "#d0d7de"
    return (f'<div class="tool {card.kind}{" failed" if card.failed else ""}" style="border-left:'
            f' 3px solid {colour}; padding-left:8px; margin:6px 0;">\n{head}{body}</div>\n')


def text_html(entry: Entry, folds: bool = True, shut: bool = False) -> str:
    """A user or assistant message; a slash command reads `/name args`, system noise
    folds away (`shut`: a view that folds its own way shows a line naming each)."""
    if entry.kind != USER:
        return markdown(entry.text)
    prompt = read_prompt(entry.text)
    body = markdown(prompt.text)
    for label, content in prompt.folded:
        body += (_note(f"▸ {label} — click to show", "dim") if shut else
                 fold(label, f'<pre style="{PRE_STYLE}">{esc(content)}</pre>\n', folds))
    return body


def has_noise(entry: Entry) -> bool:
    """A prompt with system noise around it (a reminder, a caveat, a command's output)."""
    return entry.kind == USER and "<" in entry.text and bool(read_prompt(entry.text).folded)


_WHO = {USER: "You", ASSISTANT: "Assistant"}


def entry_html(entry: Entry, card: Card | None = None, folds: bool = True) -> str:
    """One entry of the transcript fold as HTML (`card`: a tool entry's card)."""
    kind = entry.kind
    if kind in (USER, ASSISTANT):
        colour = "#0969da" if kind == USER else "#8250df"
        return (f'<div class="msg {kind}" id="m-{entry.seq}"><div class="who" style="color:'
                f'{colour}; font-weight:bold;">{_WHO[kind]}</div>\n{text_html(entry, folds)}'
                f'{"".join(image_html(i, PASTED) for i in entry.images)}</div>\n')
    if kind == REASONING:
        return fold("Reasoning", f'<div class="reasoning" style="color:#57606a;">'
                    f"{markdown(entry.text)}</div>\n", folds)
    if kind == TOOL and card is not None:
        return card_html(card, folds)
    if kind == TURN_END:
        spent = entry.turn_usage
        cost = part_line(spent) if spent else ""
        if entry.text == "completed":
            return _note(cost, "turn-cost") if cost else ""
        why = f": {entry.data['error']}" if entry.data.get("error") else ""
        return _note(f"Turn {entry.text}{why}" + (f" · {cost}" if cost else ""))
    if kind == FORK:
        source = entry.data.get("source") or entry.data.get("sourceSession") or "its source"
        return ('<hr class="fork" />\n' + _note(
            f"Forked from {source} here (after event {entry.seq - 1})", "fork-point"))
    if kind == MODEL:
        return _note(f"Model: {entry.text}")
    if kind == SUMMARY:
        return fold("Summary of the earlier conversation", markdown(entry.text), folds)
    if kind == APPROVAL:
        decision = entry.data.get("decision") or "waiting"
        return _note(f"Approval for {entry.data.get('tool')}: {decision}")
    return ""


def _note(text: str, cls: str = "note") -> str:
    return f'<p class="{cls}" style="color:#57606a; font-style:italic;">{esc(text)}</p>\n'
