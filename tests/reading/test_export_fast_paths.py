"""The export's fast paths give what the plain way gives: each is checked against the
obvious code it replaced, on texts hypothesis makes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from forkwise.core.reading.cards import read_numbers

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
