"""Markdown and code as HTML: markdown-it-py for the text, Pygments for the code.

The HTML keeps to what Qt's rich-text engine reads as well as a browser does (inline
`style` attributes, `<pre>`, `<table>`, no classes a style sheet must supply, no scripts),
so the transcript can paint it in a `QTextDocument` and the document export can embed it
unchanged. Raw HTML typed in a message is escaped, never passed through.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from pygments import highlight as pygments_highlight
from pygments.lexer import Lexer
from pygments.lexers import get_all_lexers, get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from .code_looks import CODE_CSS, SpanFormatter
from .lexing import quicken

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: the look of a block of code. Qt makes each line of a `<pre>` a block of its own and
#: would repeat a margin or padding on every line: those are left to the export's sheet
PRE_STYLE = (
    "background-color:#f6f8fa; color:#1f2328;"
    " font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace; font-size:90%;"
    " white-space:pre-wrap;"
)
CODE_STYLE = "font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace; background-color:#eff1f3;"
#: code longer than this is shown plain: highlighting it costs more than it helps
HIGHLIGHT_LIMIT = 200_000

_FORMATTER = SpanFormatter()
__all__ = ["CODE_CSS", "code_block", "highlight", "language_of", "markdown"]
_TASK = re.compile(r'<input class="task-list-item-checkbox"( checked="checked")?[^>]*>')


def _lexer_named(name: str) -> Lexer | None:
    try:
        return quicken(get_lexer_by_name(name, stripnl=False, ensurenl=False))
    except ClassNotFound:
        return None


@lru_cache(maxsize=1024)  # a session names the same files again and again
def _file_key(filename: str) -> str:
    """What picks a lexer for a file: its extension (`*.py`), or its name when it has
    none (`Makefile`). Looking a lexer up by file name walks every lexer: it is done
    once per key."""
    name = PurePosixPath(filename).name
    suffix = PurePosixPath(name).suffix
    return f"x{suffix}" if suffix else name


@lru_cache(maxsize=256)
def _lexer_for(language: str, file_key: str) -> Lexer | None:
    if language:
        found = _lexer_named(language.lower())
        if found is not None:
            return found
    if file_key:
        alias = _by_suffix().get(file_key[1:]) if file_key.startswith("x.") else None
        if alias is not None:
            return _lexer_named(alias)
        try:
            return quicken(get_lexer_for_filename(file_key, stripnl=False, ensurenl=False))
        except ClassNotFound:
            return None
    return None


@lru_cache(maxsize=1)
def _by_suffix() -> dict[str, str]:
    """The lexer of each file suffix (`.py`) that one lexer alone claims (`*.py`), by
    its first alias. Pygments' look-up by file name matches every lexer's patterns with
    fnmatch (~900 of them, each a regular expression compiled on first use): 0.7 s on
    the first card of code a session shows. A suffix several lexers claim (`.h`) is
    left to it: it ranks them."""
    claims: dict[str, list[str]] = {}
    for _name, aliases, patterns, _mimes in get_all_lexers(plugins=False):
        for pattern in patterns:
            suffix = pattern[1:]
            if pattern.startswith("*.") and suffix[1:].replace("-", "").replace("+", "").isalnum():
                claims.setdefault(suffix, []).append(aliases[0] if aliases else "")
    return {suffix: found[0] for suffix, found in claims.items() if len(found) == 1 and found[0]}


def _lexer(language: str, filename: str) -> Lexer | None:
    return _lexer_for(language, _file_key(filename) if filename else "")


def language_of(filename: str) -> str:
    """The fence language for a file (its lexer's short name), or "" when none is known."""
    lexer = _lexer("", filename)
    return lexer.aliases[0] if lexer is not None and lexer.aliases else ""


def highlight(code: str, language: str = "", filename: str = "") -> str:
    """`code` as HTML spans of the classes CODE_CSS colours (no wrapper): the language
    named, else the file's extension, else plain (escaped) text. Every space is kept."""
    lexer = _lexer(language, filename) if len(code) <= HIGHLIGHT_LIMIT else None
    if lexer is None:
        return html.escape(code, quote=False)
    if len(code) <= CACHED_CODE:
        return _highlighted(code, lexer)
    return _highlight(code, lexer)


def _highlight(code: str, lexer: Lexer) -> str:
    # lexers read lines: the last one needs its newline, taken off again after
    ended = code.endswith("\n")
    out: str = pygments_highlight(code if ended else code + "\n", lexer, _FORMATTER)
    if not ended:  # the newline may end the last span (blanks join their span)
        if out.endswith("\n"):
            return out[:-1]
        if out.endswith("\n</span>"):
            return out[:-8] + "</span>"
    return out


#: a session shows the same code again and again (a file read after each edit, the same
#: output): what was highlighted once is kept, up to this size of code
CACHED_CODE = 64_000
_highlighted = lru_cache(maxsize=512)(_highlight)


def forget_highlighted() -> None:
    """Drop the highlighted code kept so far (the benchmark starts each run cold)."""
    _highlighted.cache_clear()


def code_block(code: str, language: str = "", filename: str = "") -> str:
    """A `<pre>` of highlighted code, styled inline (a last newline would show as an
    empty line)."""
    body = highlight(code.removesuffix("\n"), language, filename)
    return f'<pre style="{PRE_STYLE}"><code>{body}</code></pre>\n'


def _fence(code: str, language: str, _attrs: str) -> str:
    return code_block(code, language.split(maxsplit=1)[0] if language else "")


#: the domains a bare name links to (`example.com`, `www.x.org`). linkify-it's default also
#: takes every two-letter country domain, which made `app.py`, `README.md` and `main.rs`
#: links to http://app.py and the like
TLDS = ("com", "org", "net", "io", "dev", "edu", "gov", "info", "app", "ai")
#: what a text holds when linkify can find a link in it (a scheme's `//` or `mailto:`, an
#: address's `@`, a bare name under TLDS): a text without any is parsed without linkify,
#: whose search over every text was a third of the time Markdown took
_TLD = re.compile(r"\.(?:" + "|".join(TLDS) + r")\b", re.IGNORECASE)
#: searched apart, and only in a text with a colon: an expression that starts with a
#: letter in any case (or with one of two words) cannot skip ahead to where it may match,
#: and took 4.7 ms of the export's 10 ms of Markdown (a literal dot first: 0.2 ms)
_MAILTO = re.compile("mailto:", re.IGNORECASE)
#: what makes a text more than paragraphs of plain words: Markdown's punctuation, a blank
#: other than a space or a newline (a tab, a form feed, Unicode's spaces), a line that
#: starts a list, heading underline, rule or indented code; and a hard break (two spaces
#: at a line's end). One character class, then line starts only: the one expression with
#: all of them tried every alternative at every character (5x slower)
_MARKUP_CHARS = re.compile(
    "[*_`#>\\[\\]|~<&\\\\+{}\t\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028"
    "\u2029\u202f\u205f\u3000]")
#: (searched behind a newline put first: the literal newline lets the search skip to each
#: line's start, where a multi-line `^` is tried at every character, 3x slower)
_LINE_START = re.compile(r"\n(?: {0,3}(?:[-=]|\d{1,9}[.)])| {4})")


def _linkish(text: str) -> bool:
    return ("//" in text or "@" in text or _TLD.search(text) is not None
            or (":" in text and _MAILTO.search(text) is not None))


def _marked_up(text: str) -> bool:
    return (_MARKUP_CHARS.search(text) is not None
            or _LINE_START.search("\n" + text) is not None
            or "  \n" in text or text.endswith("  "))


@lru_cache(maxsize=2)  # once a process for each
def _parser(linkify: bool) -> MarkdownIt:
    """The Markdown parser, made when text first needs one: importing markdown-it and
    making its parsers is ~10-15 ms of CPU that the app's start paid before its session
    tree showed (its transcript's modules import this one), and a text of plain words
    never needs one (`plain_paragraphs`)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.tasklists import tasklists_plugin

    md = MarkdownIt("commonmark", {"html": False, "linkify": linkify, "highlight": _fence})
    md.enable(["table", "strikethrough", *(["linkify"] if linkify else [])])
    md.use(tasklists_plugin)
    if linkify and md.linkify is not None:
        md.linkify.tlds(list(TLDS), False)
    return md


def plain_paragraphs(text: str) -> str | None:
    """The HTML markdown-it makes of `text` when it is only paragraphs of plain words (no
    Markdown, nothing to link), made without parsing it; None for any other text."""
    if _marked_up(text) or _linkish(text):
        return None
    out, para = [], []
    for raw in [*text.split("\n"), ""]:
        line = raw.strip(" ")
        if line:
            para.append(line)
        elif para:
            out.append("<p>" + "\n".join(para).replace('"', "&quot;") + "</p>\n")
            para = []
    return "".join(out)


def markdown(text: str) -> str:
    """Assistant or user text (CommonMark + GitHub tables, task lists, strikethrough,
    autolinks) as HTML. Task boxes are ☑/☐ (Qt draws no form controls); inline code
    is monospace by its own style."""
    if not text:
        return ""
    plain = plain_paragraphs(text)
    if plain is not None:
        return plain
    out: str = _parser(_linkish(text)).render(text)
    if "task-list-item-checkbox" in out:
        out = _TASK.sub(lambda m: "☑" if m.group(1) else "☐", out)
    if "<code>" in out:
        out = out.replace("<code>", f'<code style="{CODE_STYLE}">')
        styled = f'<pre style="{PRE_STYLE}"><code>'
        for pre in (f'<pre style="{PRE_STYLE}">', "<pre>"):  # fenced, indented
            out = out.replace(f'{pre}<code style="{CODE_STYLE}">', styled)
    if "<table>" in out:
        out = out.replace("<table>", '<table border="1" cellspacing="0" cellpadding="4"'
                          ' style="border-collapse:collapse; margin:4px 0;">')
    return out
