"""The rich text of a transcript entry, as its card shows it (transcript_delegate paints
it): escaped, so session text is never interpreted as HTML. A tool's output shows its first
`RESULT_LINES` lines until it is unfolded (a click, or Enter or Space on its row).
"""

from __future__ import annotations

import html
from typing import Any

import orjson
from PySide6.QtGui import QPalette

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
from forkwise.gui.models.session_rows import format_when
from forkwise.gui.models.transcript_model import plain_text

RESULT_LINES = 6


def dim_colour(pal: QPalette) -> str:
    return pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()



def _text(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


NO_PROVIDER_HINT = ("Session → Use the model from Preferences switches to the model chosen "
                    "there and offers to ask again")


def result_text(result: Any) -> str:
    """A tool's output as a person reads it. Codex keeps a shell call's output as a JSON
    string (`{"output": "...", "metadata": {"exit_code": 1}}`): its text is shown, with
    real line breaks, and a failing exit code."""
    if isinstance(result, str) and result.startswith("{"):
        try:
            value = orjson.loads(result)
        except orjson.JSONDecodeError:
            return result
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            tail = f"\n(exit code {code})" if code not in (None, 0) else ""
            return str(value["output"]) + tail
    return json_text(result)


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


def entry_html(entry: Entry, pal: QPalette) -> str:
    """The rich text of one entry (escaped: session text is never interpreted as HTML)."""
    kind = entry.kind
    when = format_when(entry.ts)
    origin = ' <span class="dim">· copied from the source</span>' if entry.origin else ""
    if kind in (USER, ASSISTANT, STREAM):
        speaker = {"user": "You", "assistant": "Assistant", "stream": "Assistant"}[kind]
        status = ' <span class="dim">· writing…</span>' if kind == STREAM else ""
        return (f'<p><b>{speaker}</b> <span class="dim">{when}</span>{origin}{status}</p>'
                f'<p style="margin-top: 4px">{_text(entry.text) or "<i>(no text)</i>"}</p>')
    if kind == REASONING:
        words = len(entry.text.split())
        if not entry.expanded:
            return (f'<p class="dim"><i>▸ Reasoning ({words} words) — click to show</i></p>')
        return (f'<p class="dim"><i>▾ Reasoning — click to hide</i></p>'
                f'<p class="dim" style="margin-top: 4px"><i>{_text(entry.text)}</i></p>')
    if kind == TOOL:
        name = html.escape(str(entry.data.get("name")))
        args = _text(json_text(entry.data.get("args", {})))
        out = [f'<p><b>⚙ {name}</b> <span class="dim">tool call · {when}</span></p>',
               f'<pre style="margin-top: 4px">{args}</pre>']
        result = entry.data.get("result")
        if result is None:
            out.append('<p class="dim"><i>no result yet</i></p>')
        else:
            text = result_text(result)
            lines = text.splitlines()
            shown = lines if entry.expanded else lines[:RESULT_LINES]
            label = ('<p style="margin-top: 6px; color: #c0392b"><b>failed:</b></p>'
                     if entry.data.get("is_error") else
                     '<p class="dim" style="margin-top: 6px">result:</p>')
            out.append(f'{label}'
                       f'<pre style="margin-top: 2px">{_text(chr(10).join(shown))}</pre>')
            if len(lines) > RESULT_LINES:
                more = "click to fold" if entry.expanded else (
                    f"… {len(lines) - RESULT_LINES} more lines — click to show")
                out.append(f'<p class="dim"><i>{more}</i></p>')
        return "".join(out)
    if kind == APPROVAL:
        decision = entry.data.get("decision")
        tool = html.escape(str(entry.data.get("tool")))
        word = {"approved": "✓ Approved", "denied": "✕ Denied", "expired": "Not answered"}.get(
            str(decision), str(decision))
        return f'<p>{word}: <b>{tool}</b> <span class="dim">{when}</span></p>'
    if kind == TURN_END:
        colour = {"completed": dim_colour(pal), "cancelled": "#b36b00", "failed": "#c0392b",
                  "interrupted": "#b36b00"}.get(entry.text, dim_colour(pal))
        line = (f'<p align="center" style="color: {colour}"><small>— turn '
                f'{html.escape(entry.text)} · {when} —</small></p>')
        error = entry.data.get("error")
        if not error:
            return line
        hint = (f"<br>{html.escape(NO_PROVIDER_HINT)}" if "provider" in str(error) else "")
        return (line + f'<p align="center" style="color: {colour}"><small>'
                f"{html.escape(str(error))}{hint}</small></p>")
    if kind == FORK:
        return f"<p>{html.escape(plain_text(entry))}</p>"
    if kind == MODEL:
        return f'<p align="center" class="dim"><small>Model: {html.escape(entry.text)}</small></p>'
    if kind == TITLE:
        return f'<p align="center" class="dim"><small>Title: {html.escape(entry.text)}</small></p>'
    if kind == SUMMARY:
        return (f'<p><b>Earlier context summarised</b></p>'
                f'<p class="dim">{_text(entry.text)}</p>')
    return f"<p>{html.escape(plain_text(entry))}</p>"
