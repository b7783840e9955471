"""Text with no Markdown in it is made into paragraphs without parsing (the export of a
long session spent most of its Markdown time on such text): the HTML is the one
markdown-it makes of it, whatever the text. File names are not links."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from forkwise.core.reading.markup import _parser, markdown, plain_paragraphs

#: words, spaces, blank lines and the punctuation agents write, Markdown's own included
TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab é1 2.\n\n  ,:;!?'\"()/-=%$")), max_size=60),
    st.text(alphabet=st.sampled_from(list("ab é1 2.\n\n  ,:;!?'\"()/-=%$*_`#>[]|~<&+{}\t@")),
            max_size=60))


FAST: list[bool] = []


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_plain_paragraphs_are_what_markdown_it_makes(text: str) -> None:
    fast = plain_paragraphs(text)
    FAST.append(fast is not None)
    if fast is not None:
        assert fast == _parser(True).render(text)


def test_the_property_saw_the_fast_path() -> None:
    if FAST:  # run after the property: a good share of its texts took the fast path
        assert sum(FAST) > len(FAST) // 10, (sum(FAST), len(FAST))


def test_plain_text_takes_the_fast_path_and_markup_does_not() -> None:
    assert plain_paragraphs("I read the file.\nIt looks fine.\n\nNext: the tests.") == (
        "<p>I read the file.\nIt looks fine.</p>\n<p>Next: the tests.</p>\n")
    for marked in ("a *b*", "- item", "1. first", "# head", "    code", "x  \ny", "a\n===",
                   "see https://example.org", "mail a@b.com", "www.example.com"):
        assert plain_paragraphs(marked) is None, marked


def test_file_names_are_not_links_and_addresses_are() -> None:
    for name in ("app.py", "README.md", "main.rs", "index.ts", "run.sh"):
        assert "<a " not in markdown(f"I changed {name} today."), name
    assert '<a href="http://www.example.com">' in markdown("see www.example.com")
    assert '<a href="https://example.org/x">' in markdown("see https://example.org/x")
    assert '<a href="http://example.com">' in markdown("see example.com")


def test_a_file_suffix_finds_the_lexer_pygments_would() -> None:
    """The suffix map (one lexer claims it) gives the lexer Pygments' own look-up by file
    name gives, for every suffix in it."""
    from pygments.lexers import get_lexer_for_filename

    from forkwise.core.reading.markup import _by_suffix, _lexer_named

    found = _by_suffix()
    assert {".py", ".ts", ".rs", ".go", ".json", ".toml"} <= set(found)
    assert ".h" not in found  # several lexers claim it: Pygments ranks them
    for suffix, alias in found.items():
        ours = _lexer_named(alias)
        assert type(ours) is type(get_lexer_for_filename(f"x{suffix}")), suffix


#: in a fresh process: whether markdown-it is loaded after importing what the transcript
#: and the exports import, after plain words, and after Markdown
LAZY_PROBE = """
import sys
from forkwise.core.reading import render
from forkwise.core.reading.markup import markdown
seen = ["markdown_it" in sys.modules]
markdown("I read the file.")
seen.append("markdown_it" in sys.modules)
assert "<strong>" in markdown("a **b**")
seen.append("markdown_it" in sys.modules)
print(seen)
"""


def test_markdown_it_is_loaded_when_text_first_needs_it() -> None:
    """The app's start imports the transcript's modules before its session tree shows:
    markdown-it (~10-15 ms of CPU) waits for the first text that is Markdown."""
    done = subprocess.run(
        [sys.executable, "-c", LAZY_PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split("\n")[0] == "[False, False, True]"
