"""The digest of a log prefix: what a fork's child records of the lines it copied, so that a
later rewrite of its source below the fork point (replace in place, a re-import) can be
told from the source merely growing.

The digest covers the prefix's serialized lines, each with its newline — exactly the bytes
a JSON Lines fork copies from its source file — so a backend that copies those bytes can
hash the same range (`span_digest`) without decoding a single event. BLAKE2b: fast on any
CPU Python runs on, and a 128-bit digest is plenty to notice an accidental change.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence

from forkwise.core.log.event_log import event_lines
from forkwise.core.log.events import Event

#: the field of a `history/fork` event that holds the digest of the copied prefix
DIGEST_FIELD = "prefixDigest"
_PREFIX = "b2:"
_CHUNK = 1 << 20


def _new() -> hashlib.blake2b:
    return hashlib.blake2b(digest_size=16)


def digest_lines(lines: Iterable[bytes]) -> str:
    """The digest of serialized event lines (each hashed with its newline)."""
    h = _new()
    for line in lines:
        h.update(line)
        h.update(b"\n")
    return _PREFIX + h.hexdigest()


def prefix_digest(events: Sequence[Event]) -> str:
    """The digest of a prefix of a log, from the bytes its lines were read from where known
    (a lazily decoded log decodes nothing for it)."""
    return digest_lines(event_lines(events))


def span_digest(fd: int, start: int, end: int) -> str | None:
    """The digest of bytes start..end of an open file that holds a prefix's lines as a
    JSON Lines log lays them out (one line per event, each ending in a newline); None when
    the file ends early."""
    h = _new()
    offset = start
    while offset < end:
        chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
        if not chunk:
            return None
        h.update(chunk)
        offset += len(chunk)
    return _PREFIX + h.hexdigest()
