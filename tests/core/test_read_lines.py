"""`safe_read.read_lines`: a session file read a span at a time and split, giving exactly
what reading it whole and splitting gives, under the same refusals as `read_regular`."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from forkwise.core import safe_read
from forkwise.core.safe_read import FileTooLarge, NotRegularFile, read_lines, read_regular


@pytest.mark.parametrize("span", [1, 2, 3, 7, 64, 1 << 20])
def test_the_lines_are_those_of_the_whole_file_split(
    tmp_path: Path, span: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(safe_read, "_LINES_SPAN", span)
    rng = random.Random(span)
    path = tmp_path / "log.jsonl"
    samples = [b"", b"\n", b"\n\n", b"a", b"a\n", b"ab\ncd", b"\nab\n\ncd\n"]
    samples += [bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 60))) for _ in range(200)]
    samples.append(b"x" * 300 + b"\n" + b"y" * 200)  # lines longer than any span
    for data in samples:
        path.write_bytes(data)
        lines, size, st = read_lines(path)
        assert lines == data.split(b"\n"), data
        assert size == st.st_size == len(data)


def test_refuses_what_read_regular_refuses(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"a\nb\n")
    link.symlink_to(target)
    for path in (fifo, tmp_path):
        with pytest.raises(NotRegularFile):
            read_lines(path)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        read_lines(link)  # a link is not followed
    big = tmp_path / "big"
    big.write_bytes(b"x\n" * 50)
    with pytest.raises(FileTooLarge):
        read_lines(big, limit=99)
    assert read_lines(big, limit=100)[0] == read_regular(big, limit=100)[0].split(b"\n")


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat taken on opening says less than the file holds by the time the read gets
    there (an appender wrote meanwhile): what is there is read, as read_regular does."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\ntwo\n")
    real_read = os.read
    grown = []

    def read(fd: int, n: int) -> bytes:
        if not grown:
            grown.append(True)
            with open(path, "ab") as fh:
                fh.write(b"three\nfour")
        return real_read(fd, n)

    monkeypatch.setattr(safe_read.os, "read", read)
    lines, size, st = read_lines(path)
    assert lines == [b"one", b"two", b"three", b"four"]
    assert (size, st.st_size) == (len(b"one\ntwo\nthree\nfour"), len(b"one\ntwo\n"))
