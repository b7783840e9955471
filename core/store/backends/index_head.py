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
names the old file and is never taken. Whoever writes `index.json` writes the head of it
right after (`save_head`, told by the catalogue), and the desktop app makes one once its
host has closed the store if there is none of the index there (`save_index_head`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from heapq import nlargest
from itertools import compress
from operator import and_, itemgetter, ne, not_
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.backends.catalogue import Catalogue
from forkwise.core.store.backends.index_entries import entry_lineage, vouch_entry
from forkwise.core.store.session import INDEX_ROW_KEYS, SessionSummary

log = logging.getLogger(__name__)

HEAD_NAME = "index-head.json"
HEAD_VERSION = 1
#: tops kept: more than a window's first page (the app's tree fetches 200 at a time)
HEAD_TOPS = 256

Entries = dict[str, dict[str, Any]]

#: where a summary row keeps its source session and last activity (index_entries._lineage_of)
_PARENT, _UPDATED = INDEX_ROW_KEYS.index("parentSession"), INDEX_ROW_KEYS.index("updated")
#: a row as this version writes it, or one of the version before `approvals` were kept
_ROW_LENGTHS = frozenset({len(INDEX_ROW_KEYS) - 1, len(INDEX_ROW_KEYS)})
_PARENT_TYPES = frozenset({str, type(None)})


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
    return _save(index_path, index, before)


def save_head(index_path: Path, index: Entries, written: os.stat_result) -> None:
    """The head of the index just written to `index_path` (its `entries`, the file's
    stat as written): the catalogue writes it with each index (`Catalogue.saved`), so that
    the next window's start after any process changed the store (a CLI command, `forkwise
    host`) reads the head instead of the whole index (at 100,000 sessions, 40 MB: 0.5-0.7
    s of CPU and +126 MB). Picking the head's entries: ~60 ms at 100,000 sessions."""
    if index:
        _save(index_path, index, written)


def _save(index_path: Path, index: Entries, st: os.stat_result) -> bool:
    kept, tops = head_ids(index)
    data = {
        "version": HEAD_VERSION,
        "index": _identity(st),
        "complete": tops <= HEAD_TOPS,
        "tops": min(tops, HEAD_TOPS),
        "entries": {sid: index[sid] for sid in kept},
    }
    head_path = index_path.with_name(HEAD_NAME)
    try:
        replace_file(head_path, orjson.dumps(data))
    except OSError as exc:  # a cache: the next start reads the whole index instead
        log.warning("could not save the index head %s: %s", head_path, exc)
        return False
    return True


def head_ids(index: Entries) -> tuple[list[str], int]:
    """The sessions of the head (the first `HEAD_TOPS` tops of `entry_lineage(index)` and
    every session beneath them, in the index's order) and how many tops there are. Entries
    as this version writes them (a summary row each) are looked at in C, a column at a
    time (100,000 entries: ~60 ms instead of entry_lineage's ~200); any other entry is
    left to entry_lineage."""
    sids = list(index)
    try:
        rows = list(map(itemgetter("summary"), index.values()))
    except KeyError:
        rows = []
    if (
        set(map(type, rows)) != {list}
        or not set(map(len, rows)) <= _ROW_LENGTHS
        or not set(map(type, updated := list(map(itemgetter(_UPDATED), rows)))) <= {str}
        or not set(map(type, parents := list(map(itemgetter(_PARENT), rows)))) <= _PARENT_TYPES
    ):
        return _kept(*entry_lineage(index), sids)
    # beneath another: its source is another session of the index (entry_lineage's rule)
    beneath = list(map(and_, map(index.__contains__, parents), map(ne, parents, sids)))
    is_top = list(map(not_, beneath))
    top_updated = list(compress(updated, is_top))
    if not top_updated:
        return [], 0
    # a pair made only for the tops active since the HEAD_TOPS-th latest (100,000 pairs
    # cost more than all the rest)
    since = nlargest(HEAD_TOPS, top_updated)[-1]
    latest = compress(
        zip(updated, sids, strict=True), map(and_, is_top, map(since.__le__, updated))
    )
    children: dict[str, list[str]] = {}
    for parent, sid in compress(zip(parents, sids, strict=True), beneath):  # the forks: few
        children.setdefault(parent, []).append(sid)
    first = [sid for _updated, sid in nlargest(HEAD_TOPS, latest)]
    return _kept(first, children, sids)[0], len(top_updated)


def _kept(
    tops: list[str], children: dict[str, list[str]], sids: list[str]
) -> tuple[list[str], int]:
    """The first `HEAD_TOPS` of `tops` and every session beneath them, in `sids`' order,
    and how many tops there are."""
    kept: set[str] = set()
    stack = tops[:HEAD_TOPS]
    while stack:
        sid = stack.pop()
        if sid not in kept:
            kept.add(sid)
            stack.extend(children.get(sid, ()))
    return list(compress(sids, map(kept.__contains__, sids))), len(tops)
