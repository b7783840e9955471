"""Highlighted code as spans of a few short classes (`<span class="h3">`), one class per
look of Pygments' default style, and the style sheet that colours them (`CODE_CSS`).

Pygments' own HTML with inline styles wrote `style="color: #008000; font-weight: bold"`
on every keyword: more than half of a long session's HTML export (10.7 of 19.4 MB). The
export carries CODE_CSS in its style sheet; the transcript gives it to each card's
document (Qt's rich text reads class selectors). Only tokens the style gives a look are
wrapped (blanks join the span they are in); the rest is escaped text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from pygments.formatter import Formatter
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, _TokenType


def _look(style: Any) -> str:
    """A token's look in CSS: colour, weight, slant, underline, background."""
    parts = []
    if style.get("color"):
        parts.append(f"color:#{style['color']}")
    if style.get("bold"):
        parts.append("font-weight:bold")
    if style.get("italic"):
        parts.append("font-style:italic")
    if style.get("underline"):
        parts.append("text-decoration:underline")
    if style.get("bgcolor"):
        parts.append(f"background-color:#{style['bgcolor']}")
    return "; ".join(parts)


def _classes(style_name: str) -> tuple[dict[_TokenType, str], dict[str, str]]:
    """(the class of each standard token type that has a look, the look of each class)."""
    style = get_style_by_name(style_name)
    of_type: dict[_TokenType, str] = {}
    by_look: dict[str, str] = {}
    for ttype in sorted(STANDARD_TYPES, key=str):
        look = _look(style.style_for_token(ttype))
        if look:
            of_type[ttype] = by_look.setdefault(look, f"h{len(by_look)}")
    return of_type, {cls: look for look, cls in by_look.items()}


_OF_TYPE, _LOOKS = _classes("default")
CODE_CSS = "\n".join(f"span.{cls} {{ {look} }}" for cls, look in _LOOKS.items())


class SpanFormatter(Formatter):  # type: ignore[type-arg]
    """Tokens as escaped text, those with a look in a span of its class."""

    def __init__(self) -> None:
        super().__init__()
        self._class: dict[_TokenType, str] = {}

    def class_of(self, ttype: _TokenType) -> str:
        found = self._class.get(ttype)
        if found is None:
            standard = ttype
            while standard not in STANDARD_TYPES and standard.parent is not None:
                standard = standard.parent
            found = self._class[ttype] = _OF_TYPE.get(standard, "")
        return found

    def format(self, tokensource: Iterable[tuple[_TokenType, str]], outfile: Any) -> None:
        out: list[str] = []
        last, run = "", ""  # tokens of one class in a row share a span
        for ttype, value in tokensource:
            # blanks join the run they are in (only their width shows)
            cls = last if value.isspace() else self.class_of(ttype)
            if cls == last:
                run += value
                continue
            out.append(_span(last, run))
            last, run = cls, value
        out.append(_span(last, run))
        outfile.write("".join(out))


def _span(cls: str, text: str) -> str:
    if not text:
        return ""
    escaped = html.escape(text, quote=False)
    return f'<span class="{cls}">{escaped}</span>' if cls else escaped
