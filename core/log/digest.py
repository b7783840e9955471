"""The digest of a log prefix: what a fork's child records of the lines it copied, so that a
later rewrite of its source below the fork point (replace in place, a re-import) can be
told from the source merely growing.

The digest covers the prefix's serialized lines, each with its newline — exactly the bytes
a JSON Lines fork copies from its source file — so a backend that copies those bytes can
hash the same range (`span_digest`) without decoding a single event.

It is the byte length and CRC-32 of those bytes: its job is to notice an accidental
rewrite, not to resist a forger, and it must stay cheap beside the copy it accompanies. On
a 48 MB prefix CRC-32 costs ~0.05 s where SHA-256 or BLAKE2b cost 0.14-0.18 s, against
~0.15 s for the copy itself (the fork benchmark keeps a fork within 2x of a raw copy).
"""

from __future__ import annotations

import itertools
import os
import zlib
from collections.abc import Iterable, Sequence

from forkwise.core.log.event_log import event_lines
from forkwise.core.log.events import Event

#: the field of a `history/fork` event that holds the digest of the copied prefix
DIGEST_FIELD = "prefixDigest"
_CHUNK = 1 << 20
_BATCH = 2048  # lines per CRC call
_NEWLINE = b"\n"


def _format(length: int, crc: int) -> str:
    return f"crc32:{length}:{crc:08x}"


def digest_lines(lines: Iterable[bytes]) -> str:
    """The digest of serialized event lines (each with its newline). Lines are joined a
    batch at a time: one CRC call per batch instead of two per line (the batch's last
    newline is hashed on its own, not appended: a copy of every byte less, 48 MB: 19 ->
    14 ms)."""
    crc, length = 0, 0
    it = iter(lines)
    while batch := list(itertools.islice(it, _BATCH)):
        block = _NEWLINE.join(batch)
        crc = zlib.crc32(_NEWLINE, zlib.crc32(block, crc))
        length += len(block) + 1
    return _format(length, crc)


def prefix_digest(events: Sequence[Event]) -> str:
    """The digest of a prefix of a log, from the bytes its lines were read from where known
    (a lazily decoded log decodes nothing for it)."""
    return digest_lines(event_lines(events))


def span_digest(fd: int, start: int, end: int) -> str | None:
    """The digest of bytes start..end of an open file that holds a prefix's lines as a
    JSON Lines log lays them out (one line per event, each ending in a newline); None when
    the file ends early."""
    crc, offset = 0, start
    while offset < end:
        chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
        if not chunk:
            return None
        crc = zlib.crc32(chunk, crc)
        offset += len(chunk)
    return _format(end - start, crc)


def running_digests(lines: Iterable[bytes]) -> list[str]:
    """`digest_lines` of every prefix of `lines`: entry n is the digest of the first n
    (one pass; CRC-32 runs on from where the shorter prefix left it)."""
    crc, length = 0, 0
    out = [_format(0, 0)]
    crc32 = zlib.crc32
    for line in lines:
        crc = crc32(_NEWLINE, crc32(line, crc))
        length += len(line) + 1
        out.append(_format(length, crc))
    return out
