"""The head of the summary index: `<store>/index-head.json`.

A window opens on the sessions most recently active at the top of their lineage. Picking
them from `index.json` means decoding all of it (~35 ms and ~10 ms of sorting for 10,000
sessions) to show a few hundred rows. The head holds the index's entries for those
sessions — the `HEAD_TOPS` most recently active tops and every session beneath them — as
they were in one `index.json`, named by that file's inode, size and mtime: a reader takes
the head only while `index.json` is still that very file (every writer replaces it by a
rename, which gives it a new inode), and falls back to the whole index otherwise.

Like the index it only saves work: each entry is still checked against its log (size and
mtime) before its summary is shown. It is a pure function of one `index.json`, so any
process may write it without the writer lock: a head made from an index replaced meanwhile
names the old file and is never taken. The desktop app writes it once its host has closed
the store (`forkwise.core.client.local.save_index_head`), for its next start.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.backends.catalogue import Catalogue, entry_lineage, vouch_entry
from forkwise.core.store.session import SessionSummary

log = logging.getLogger(__name__)

HEAD_NAME = "index-head.json"
HEAD_VERSION = 1
#: tops kept: more than a window's first page (the app's tree fetches 200 at a time)
HEAD_TOPS = 256

Entries = dict[str, dict[str, Any]]


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns]


@dataclass(frozen=True)
class IndexHead:
    """The entries of the first `HEAD_TOPS` tops (or of every top: `complete`)."""

    entries: Entries
    complete: bool

    def lineage(self) -> tuple[list[str], dict[str, list[str]]]:
        """`Catalogue.lineage` restricted to the head: its tops in the same order, and the
        same sessions beneath each (the head holds every session beneath its tops)."""
        return entry_lineage(self.entries)

    def vouch(self, sid: str, st: os.stat_result) -> SessionSummary | None:
        """`Catalogue.vouch` for a session of the head."""
        return vouch_entry(self.entries.get(sid), sid, st)


def read_head(index_path: Path, newest: int) -> IndexHead | None:
    """The head beside `index_path` if it was made from the `index.json` there now and
    holds the `newest` first tops; None otherwise (missing, stale, unreadable)."""
    try:
        raw = read_regular(index_path.with_name(HEAD_NAME))[0]
        current = _identity(os.stat(index_path))
        data = orjson.loads(raw)
    except (OSError, ForkwiseError, orjson.JSONDecodeError):
        return None
    if type(data) is not dict or data.get("version") != HEAD_VERSION:
        return None
    entries, complete, tops = data.get("entries"), data.get("complete"), data.get("tops")
    if (
        data.get("index") != current
        or type(entries) is not dict
        or type(complete) is not bool
        or type(tops) is not int
        or (not complete and newest > tops)
    ):
        return None
    return IndexHead({k: v for k, v in entries.items() if type(v) is dict}, complete)


def write_head(index_path: Path) -> bool:
    """Make the head of the `index.json` at `index_path` as it is now (unless the head
    there is of it already); False when there is none to make it from, or it changed
    while being read."""
    head_path = index_path.with_name(HEAD_NAME)
    if read_head(index_path, HEAD_TOPS) is not None:  # made from this index already
        return True
    try:
        before = os.stat(index_path)
        index = Catalogue(index_path, writable=False).entries()
        after = os.stat(index_path)
    except OSError:
        return False
    if not index or _identity(before) != _identity(after):
        return False
    tops, children = entry_lineage(index)
    kept: set[str] = set()
    stack = tops[:HEAD_TOPS]
    while stack:
        sid = stack.pop()
        if sid not in kept:
            kept.add(sid)
            stack.extend(children.get(sid, ()))
    data = {
        "version": HEAD_VERSION,
        "index": _identity(before),
        "complete": len(tops) <= HEAD_TOPS,
        "tops": min(len(tops), HEAD_TOPS),
        "entries": {sid: entry for sid, entry in index.items() if sid in kept},
    }
    try:
        replace_file(head_path, orjson.dumps(data))
    except OSError as exc:  # a cache: the next start reads the whole index instead
        log.warning("could not save the index head %s: %s", head_path, exc)
        return False
    return True
