"""The export's fast paths give what the plain way gives: each is checked against the
code it replaced (Pygments' own lexing loop, the obvious count of a read's numbers) on real
text and on texts hypothesis makes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments import highlight as pygments_highlight
from pygments.lexer import RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Name, String, Text

from forkwise.core.reading.cards import read_numbers
from forkwise.core.reading.code_looks import SpanFormatter
from forkwise.core.reading.document import Document, html_bytes, to_html
from forkwise.core.reading.lexing import _PLANS, JOIN_AFTER, Plans, join, quicken
from forkwise.core.reading.markdown_doc import code_span, fence
from forkwise.core.reading.markup import highlight

_LINE_NUMBER = re.compile(r"^ *(\d+)(?:\t|→)", re.M)

#: lines as a read shows them: numbered (`   12\t`, `12→`), empty, blank, or plain text
LINE = st.one_of(
    st.builds(lambda n, pad, sep, text: f"{' ' * pad}{n}{sep}{text}",
              st.integers(0, 120), st.integers(0, 6), st.sampled_from(["\t", "→"]),
              st.text(alphabet="ab 1\t→", max_size=8)),
    st.just(""), st.just("  "), st.text(alphabet="ab 12\t→", max_size=8))
READ = st.lists(LINE, max_size=8).map("\n".join)


def numbers_the_plain_way(content: str) -> tuple[int, int] | None:
    numbers = _LINE_NUMBER.findall(content)
    lines = content.split("\n")
    if numbers and len(numbers) == len(lines) - lines.count(""):
        return int(numbers[0]), int(numbers[-1])
    return None


@settings(max_examples=3000, deadline=None)
@given(READ)
def test_a_read_is_numbered_when_every_line_that_is_not_empty_is(content: str) -> None:
    assert read_numbers(content) == numbers_the_plain_way(content)


def test_a_numbered_read_and_one_that_is_not() -> None:
    assert read_numbers("     7\tdef f():\n     8\t    return 1\n") == (7, 8)
    assert read_numbers("12→a\n\n13→b") == (12, 13)
    assert read_numbers("     7\tdef f():\n    return 1\n") is None
    assert read_numbers("no numbers here") is None
    assert read_numbers("") is None


# --- lexing: each state's rules joined into one expression --------------------------------

#: the lexers a session's code meets most (by fence or file extension), and console output
LEXERS = ("python", "bash", "console", "json", "toml", "yaml", "javascript", "typescript",
          "rust", "go", "c", "cpp", "java", "html", "css", "sql", "diff", "ruby", "markdown",
          "ini", "docker", "make")
ROOT = Path(__file__).resolve().parents[2]
#: real text of several kinds from this repository, and shapes that move lexers between
#: states (strings across lines, nested brackets, stray quotes)
SAMPLES = [
    *(p.read_text(encoding="utf-8")[:5000] for p in (
        ROOT / "core" / "reading" / "lexing.py", ROOT / "core" / "reading" / "cards.py",
        ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "packaging" / "dev.sh")),
    "", "\n", "x", "a = '''\nb\n'''\nf'{x!r:>{w}}'\n", '{"a": [1, 2.5e3, null, "\\u00e9"]}\n',
    '<div class="x">&amp;</div>\n<script>var a = `t ${b}`;</script>\n',
    "SELECT * FROM t WHERE a = 'x'; -- c\n", 'fn main() { println!("hi {}", r#"x"#); }\n',
    "#include <stdio.h>\nint main(){ /* c */ return 0; }\n", "$ ls -la\ntotal 0\n# echo hi\n",
    "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n", "[s]\nk = 'v' # c\n",
]
CODEISH = st.text(alphabet=st.sampled_from(list("abXZ_09 \t\n\"'`#/*(){}[]<>=+-.,;:!?$@%&|\\~")),
                  max_size=200)


def pygments_tokens(name: str, text: str) -> list[tuple[Any, str]]:
    """The tokens of Pygments' own loop (a lexer made apart, never quickened)."""
    return list(get_lexer_by_name(name, stripnl=False, ensurenl=False).get_tokens(text))


@pytest.mark.parametrize("name", LEXERS)
def test_joined_states_lex_as_pygments_does(name: str) -> None:
    fast = quicken(get_lexer_by_name(name, stripnl=False, ensurenl=False), Plans(join_after=0))
    for text in SAMPLES:
        assert list(fast.get_tokens(text)) == pygments_tokens(name, text), (name, text[:60])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LEXERS), CODEISH)
def test_joined_states_lex_any_text_as_pygments_does(name: str, text: str) -> None:
    fast = quicken(get_lexer_by_name(name, stripnl=False, ensurenl=False), Plans(join_after=0))
    assert list(fast.get_tokens(text)) == pygments_tokens(name, text)


def test_the_export_highlights_python_through_joined_states_once_it_has_lexed_enough() -> None:
    """The highlighter's lexers are quickened: Python's states are joined once its class
    has lexed JOIN_AFTER characters, not before (a few cards compile nothing), and they do
    join (a change in Pygments that stops them shows here, not as a slower export)."""
    from forkwise.core.reading.markup import _lexer

    lexer = _lexer("", "app.py")
    assert lexer is not None
    assert "get_tokens_unprocessed" in vars(lexer)
    plans = _PLANS[type(lexer)]
    code = "def f(x):\n    return x  # {}\n"
    n = 0
    while plans.lexed < JOIN_AFTER:
        assert not plans.states  # nothing joined yet
        n += 1
        assert highlight(code.format(n) * 40, filename="app.py").startswith('<span class="h')
    text = code.format("after") * 40
    own = pygments_highlight(text, get_lexer_by_name("python", stripnl=False, ensurenl=False),
                             SpanFormatter())
    assert highlight(text, filename="app.py") == own
    assert plans.states.get("root") is not None, sorted(
        k for k, v in plans.states.items() if v is None)


def test_a_state_that_cannot_be_joined_is_lexed_rule_by_rule() -> None:
    """A rule with a back reference cannot join (the groups before it would shift its
    number): its state is left to the rule-by-rule loop, whose tokens are Pygments'."""

    class Quoted(RegexLexer):
        tokens: ClassVar[dict[str, Any]] = {"root": [
            (r"(['\"]).*?\1", String), (r"\w+", Name), (r"\s+", Text), (r".", Text)]}

    plans = Plans(join_after=0)
    fast = quicken(Quoted(stripnl=False, ensurenl=False), plans)
    text = "say 'it \"is\"' and \"x'y\" \n"
    assert list(fast.get_tokens(text)) == list(Quoted(stripnl=False,
                                                      ensurenl=False).get_tokens(text))
    assert plans.states["root"] is None
    assert join(Quoted._tokens["root"][1:], Quoted.flags) is not None


# --- Markdown export: fences and code spans its body's backticks cannot close -------------

TICKY = st.text(alphabet=st.sampled_from(list("a `\n")), max_size=40)


@settings(max_examples=1000, deadline=None)
@given(TICKY)
def test_a_fence_is_longer_than_any_run_of_backticks_in_its_body(body: str) -> None:
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    assert fence(body, "py") == f"{'`' * (longest + 1)}py\n{body.rstrip(chr(10))}\n{'`' * (longest + 1)}\n"


@settings(max_examples=1000, deadline=None)
@given(TICKY)
def test_a_code_span_is_longer_than_any_run_of_backticks_in_its_text(text: str) -> None:
    flat = " ".join(text.split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    pad = " " if longest else ""
    assert code_span(text) == f"{'`' * (longest + 1)}{pad}{flat}{pad}{'`' * (longest + 1)}"


# --- the HTML file: encoded part by part -----------------------------------------------------


def test_the_page_encoded_in_parts_is_the_page_encoded_whole() -> None:
    def said(seq: int, role: str, text: str) -> dict[str, Any]:
        return {"seq": seq, "type": "message", "ts": "2026-01-02T10:00:00Z", "turn": "t1",
                "id": f"m{seq}", "role": role, "parts": [{"type": "text", "text": text}]}

    doc = Document("s1", "Café ☕ — naïve", [
        {"seq": 1, "type": "turn/start", "turn": "t1", "ts": "2026-01-02T10:00:00Z"},
        said(2, "user", "Ünïcode everywhere: → ✓ \U0001d518 and plain ASCII"),
        said(3, "assistant", "plain ASCII only"),
        said(4, "assistant", "中文 **bold** `code` ☑"),
    ])
    page = html_bytes(doc)
    assert page == to_html(doc).encode("utf-8")
    assert "中文".encode() in page
    assert "Ünïcode everywhere: → ✓ \U0001d518".encode() in page
