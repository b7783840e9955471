"""Random ids: drawn from a pool of os.urandom bytes, never the same bytes twice, and a
forked child never repeats what its parent hands out next."""

from __future__ import annotations

import os
import string

from forkwise.core.log import ids


def test_random_hex_has_the_asked_length_across_pool_refills() -> None:
    drawn = [ids.random_hex(n) for n in (1, 7, 4096, 3, 5000, 2) * 5]
    assert [len(h) for h in drawn] == [2 * n for n in (1, 7, 4096, 3, 5000, 2) * 5]
    assert all(set(h) <= set(string.hexdigits.lower()) for h in drawn)


def test_random_hex_never_hands_out_the_same_bytes_twice() -> None:
    drawn = [ids.random_hex(8) for _ in range(20_000)]  # several pools' worth
    assert len(set(drawn)) == len(drawn)


def test_a_forked_child_draws_bytes_of_its_own() -> None:
    ids.random_hex(1)  # the parent has a pool with bytes left in it
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.write(write_end, ids.random_hex(16).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    assert len(child) == 32
    assert ids.random_hex(16) != child


def test_a_slug_reads_only_the_start_of_a_long_text_and_is_the_same() -> None:
    from forkwise.core.log.ids import slugify

    def whole(text: str) -> str:  # the slug as reading all of the text gives it
        import re

        found = re.findall(r"[a-z0-9]+", text.lower())[:3]
        return "-".join(found)[:24].strip("-") or "message"

    cases = [
        "Hello there, how are you " * 100,
        " " * 199 + "abc def ghi",  # the words start at the head's end
        "x" * 198 + " ab" + "cdef" * 50,  # the second word is cut by the head
        "one " + "-" * 300 + " two three four",
        "ONE TWO " + "İ" * 300,  # a capital whose lowercase is ASCII plus a mark
        "" ,
        "!!!" * 100,
    ]
    for text in cases:
        assert slugify(text) == whole(text), text[:40]


def test_a_slug_of_any_text_is_its_first_words_lowercased() -> None:
    import random
    import re

    from forkwise.core.log.ids import _first_words, slugify

    rng = random.Random(7)
    alphabet = "abcXYZ019 -_.,!?\n\t\u00c9\u00e9\u0130\u0131K\u00df\u212a\u65e5\u672c"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 260)))
        for words in (1, 3, 4):
            found = re.findall(r"[a-z0-9]+", text.lower())[:words]
            expected = "-".join(found)[:24].strip("-") or "message"
            assert slugify(text, words) == expected, text
        for n in range(6):  # the words read off a text's head: exactly the first n
            assert _first_words(text, n) == re.findall(r"[a-z0-9]+", text.lower())[:n]
