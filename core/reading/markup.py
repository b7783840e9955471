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

from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

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

_FORMATTER = HtmlFormatter(noclasses=True, nowrap=True, style="default")
_TASK = re.compile(r'<input class="task-list-item-checkbox"( checked="checked")?[^>]*>')


def _lexer_named(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


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
        try:
            return get_lexer_for_filename(file_key, stripnl=False, ensurenl=False)
        except ClassNotFound:
            return None
    return None


def _lexer(language: str, filename: str) -> Lexer | None:
    return _lexer_for(language, _file_key(filename) if filename else "")


def language_of(filename: str) -> str:
    """The fence language for a file (its lexer's short name), or "" when none is known."""
    lexer = _lexer("", filename)
    return lexer.aliases[0] if lexer is not None and lexer.aliases else ""


def highlight(code: str, language: str = "", filename: str = "") -> str:
    """`code` as HTML spans with inline colours (no wrapper): the language named, else the
    file's extension, else plain (escaped) text. Every space is kept."""
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
    return out if ended or not out.endswith("\n") else out[:-1]


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


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "highlight": _fence})
    md.enable(["table", "strikethrough", "linkify"])
    md.use(tasklists_plugin)
    return md


_MD = _parser()


def markdown(text: str) -> str:
    """Assistant or user text (CommonMark + GitHub tables, task lists, strikethrough,
    autolinks) as HTML. Task boxes are ☑/☐ (Qt draws no form controls); inline code
    is monospace by its own style."""
    if not text:
        return ""
    out: str = _MD.render(text)
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
