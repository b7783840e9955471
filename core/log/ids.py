"""Identifiers: session ids (also file names, so strictly validated) and message ids."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Container
from datetime import UTC, datetime

from forkwise.core.errors import InvalidSessionId

_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")
_SLUG_WORD = re.compile(r"[a-z0-9]+")


class _RandomPool:
    """Random bytes drawn from os.urandom 4 KiB at a time: one getrandom call per id cost
    the host's event loop 20-30 µs under load (the call gives up the interpreter lock, and
    taking it back waits on the store workers), four times per turn."""

    SIZE = 4096

    def __init__(self) -> None:
        self._bytes = b""
        self._taken = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bytes:
        with self._lock:
            if self._taken + n > len(self._bytes):
                self._bytes, self._taken = os.urandom(max(self.SIZE, n)), 0
            chunk = self._bytes[self._taken : self._taken + n]
            self._taken += n
            return chunk

    def forget(self) -> None:
        """In a forked child: start over, so parent and child never share bytes."""
        self._bytes, self._taken, self._lock = b"", 0, threading.Lock()


_pool = _RandomPool()
os.register_at_fork(after_in_child=_pool.forget)


def random_hex(nbytes: int) -> str:
    """`nbytes` random bytes from os.urandom as hex, as `secrets.token_hex` makes them,
    without importing `secrets` (which pulls in hmac, hashlib and OpenSSL: a few ms of
    every short command)."""
    return _pool.take(nbytes).hex()


def validate_session_id(value: object) -> str:
    """Return `value` if it is a valid session id, else raise InvalidSessionId.

    Ids name files on disk: 1 to 64 characters of [A-Za-z0-9._-], not starting with '.'.
    """
    if not isinstance(value, str) or not _SESSION_ID.fullmatch(value):
        raise InvalidSessionId(
            f"{value!r} is not a valid session id: use 1-64 letters, digits, '.', '_' or '-', "
            "not starting with '.'",
            session_id=value if isinstance(value, str) else repr(value),
        )
    return value


def new_session_id(taken: Container[str] = ()) -> str:
    """A fresh, sortable session id: UTC timestamp plus random suffix."""
    while True:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        candidate = f"{stamp}-{random_hex(3)}"
        if candidate not in taken:
            return candidate


#: characters of a text read for its slug first (a long reply is not read to its end)
_SLUG_HEAD = 200


def slugify(text: str, words: int = 3, limit: int = 24) -> str:
    """The first `words` words of `text` (lowercase letters and digits), joined by '-'
    and cut at `limit`. Only the start of a long text is read when it holds them."""
    found = _first_words(text[:_SLUG_HEAD], words + 1)
    if len(found) <= words and len(text) > _SLUG_HEAD:
        # the last word found may go on past the head: only words followed by another
        # one found are whole
        found = _first_words(text, words)
    slug = "-".join(found[:words])[:limit].strip("-")
    return slug or "message"


def _first_words(text: str, n: int) -> list[str]:
    """The first `n` words of `text`, lowercased: one match of up to `n` words, then its
    words (a match object for each word cost a third of an import's message ids)."""
    run = _SLUG_RUNS.get(n)
    if run is None:
        run = _SLUG_RUNS[n] = re.compile(rf"[a-z0-9]+(?:[^a-z0-9]+[a-z0-9]+){{0,{n - 1}}}")
    found = run.search(text.lower()) if n > 0 else None
    return _SLUG_WORD.findall(found.group()) if found is not None else []


#: a pattern for the first n words, by n
_SLUG_RUNS: dict[int, re.Pattern[str]] = {}


def new_message_id(role: str, text: str, taken: Container[str] = ()) -> str:
    """A readable message id `role:slug:suffix`, unique among `taken`."""
    slug = slugify(text)
    while True:
        candidate = f"{role}:{slug}:{random_hex(2)}"
        if candidate not in taken:
            return candidate


def new_token(prefix: str) -> str:
    return f"{prefix}:{random_hex(4)}"
