"""An append of several events is all or nothing, as a first import is: a process killed
while it writes them (a write(2) of megabytes stops at any page) must not leave the first
half of a turn, or of an import's new events, in the log.

Before such an append the writer says in a note beside the log, `.<id>.appending`, the
file's size before the append and the size it will have after. While a note says the file
is between the two sizes, the bytes past the first are an append nobody finished: readers
stop before them, and the next writer to open the store moves them to
`<store>/recovered/` and cuts the log back. A note whose append was finished (the size it
names reached, or passed by later appends) changes nothing, so a note stays between
appends: each append rewrites it in place (one write into the page cache, fixed width),
instead of creating and deleting a file around every append (measured: the folder's two
changes made each fsynced turn ~15 % slower). It goes when the log is replaced or deleted
(a shorter log could fall inside its range) and when the writer closes. One event needs no
note: its line, cut short, is already a torn last line.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from forkwise.core.safe_read import read_head
from forkwise.core.store.atomic import write_file_atomically
from forkwise.core.store.store_dir import make_private_dir

SUFFIX = ".appending"


def note_path(log: Path) -> Path:
    """The note of an append in flight to the log at `log` (`<id>.jsonl`)."""
    return log.with_name(f".{log.name[: -len('.jsonl')]}{SUFFIX}")


def begin(log: Path, before: int, after: int) -> bytes:
    """Say that an append takes `log` from `before` to `after` bytes (the note is made on
    first use, then written over in place); what the note now holds."""
    said = f"{before:020d} {after:020d}\n".encode()
    write_note(note_path(log), said)
    return said


def write_note(note: Path, said: bytes) -> None:
    fd = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.pwrite(fd, said, 0)  # fixed width: the whole note, never a mix of two
    finally:
        os.close(fd)


def end(note: Path) -> None:
    """The note goes: its log is replaced or deleted, or its writer closes."""
    with contextlib.suppress(FileNotFoundError):
        note.unlink()


#: a write(2) a kill stops part-way stops after a whole page (or folio) of the file
_PAGE = 4096


def may_be_cut(lines: list[bytes], size: int) -> bool:
    """Whether a log read as `lines` (split at every newline) of `size` bytes can end
    inside an unfinished append, so that its note is worth looking for: the write stopped
    at a page boundary, or inside a line. A log that ends with a whole line anywhere else
    cannot (a listing reads thousands of logs: one more open each is ~10 us apiece)."""
    return size % _PAGE == 0 or bool(lines and lines[-1])


def unfinished(log: Path, size: int) -> int | None:
    """The size `log` had before an unfinished append, when its note says the file (of
    `size` bytes now) is part-way through one; else None."""
    try:
        raw = read_head(note_path(log), 64)
        before, after = (int(n) for n in raw.split())
    except (OSError, ValueError):
        return None
    return before if before < size < after else None


def cut_lines(lines: list[bytes], keep: int) -> list[bytes]:
    """`lines` (a file's bytes split at every newline) as the first `keep` bytes of the
    file would split: what a reader reads of a log with an unfinished append."""
    pos = 0
    for i, line in enumerate(lines):
        if pos + len(line) >= keep:
            return [*lines[:i], line[: keep - pos]]
        pos += len(line) + 1
    return lines


def recover(root: Path, sessions_dir: Path, stamp: str) -> None:
    """At a writer's start (no append is in flight): every log an append was cut short in
    goes back to its size before it, the cut bytes kept in `<store>/recovered/`; every
    note goes."""
    try:
        notes = [n for n in os.listdir(sessions_dir) if n.startswith(".") and n.endswith(SUFFIX)]
    except OSError:
        return
    for name in notes:
        note = sessions_dir / name
        log = sessions_dir / f"{name[1 : -len(SUFFIX)]}.jsonl"
        with contextlib.suppress(OSError):
            size = os.lstat(log).st_size
            keep = unfinished(log, size)
            if keep is not None:
                _cut(root, log, keep, stamp)
        end(note)


def _cut(root: Path, log: Path, keep: int, stamp: str) -> None:
    fd = os.open(log, os.O_RDWR | os.O_NOFOLLOW)
    try:
        os.lseek(fd, keep, os.SEEK_SET)
        rest = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        recovered = root / "recovered"
        make_private_dir(recovered)
        sid = log.name[: -len(".jsonl")]
        write_file_atomically(recovered / f"{sid}.{stamp}.unfinished-append", rest,
                              overwrite=False)  # fmt: skip
        os.ftruncate(fd, keep)
        os.fsync(fd)
    finally:
        os.close(fd)
