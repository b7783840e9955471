"""An entry of the summary index (`<store>/index.json`, kept by catalogue.py): the size
and mtime of the log it summarizes and its summary, a row (`SessionSummary.to_index_row`;
entries written before hold an object, or a row of the version before `approvals` were
kept, read as well), and beside it the session's own usage (`usage`, `OwnUsage`: entries
written before it was kept have none, and a listing reads that log again once). An entry
only ever saves work: one that does not match its log is not taken (`describes`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from forkwise.core.log.usage import OwnUsage
from forkwise.core.store.session import INDEX_ROW_KEYS, SessionSummary


def index_entry(st: os.stat_result, summary: SessionSummary) -> dict[str, Any]:
    entry = {"size": st.st_size, "mtime": st.st_mtime_ns, "summary": summary.to_index_row()}
    if summary.usage is not None:  # beside the row: a listing prices it, reading no log
        entry["usage"] = summary.usage.to_index()
    return entry


def describes(record: dict[str, Any], st: os.stat_result) -> bool:
    """Whether an index record was made for the log as `st` finds it (size and mtime)."""
    return record.get("size") == st.st_size and record.get("mtime") == st.st_mtime_ns


def stated(
    entries: Sequence[os.DirEntry[str]],
) -> Iterator[tuple[int, os.DirEntry[str], str, os.stat_result]]:
    """(position from 1, entry, session id, stat) of each log that can be stat'ed (one
    that went meanwhile is passed over)."""
    for n, entry in enumerate(entries, start=1):
        try:
            st = entry.stat()
        except OSError:
            continue
        yield n, entry, entry.name[: -len(".jsonl")], st


def entry_lineage(
    index: dict[str, dict[str, Any]],
) -> tuple[list[str], dict[str, list[str]]]:
    """`Catalogue.lineage` of these entries: the tops (their source is not among them),
    most recently active first, and the sessions beneath each one, in the entries' order."""
    tops: list[tuple[str, str]] = []
    children: dict[str, list[str]] = {}
    for sid, cached in index.items():
        parent, updated = _lineage_of(cached.get("summary"))
        if parent is not None and parent != sid and parent in index:
            children.setdefault(parent, []).append(sid)
        else:
            tops.append((updated, sid))
    tops.sort(reverse=True)
    return [sid for _updated, sid in tops], children


def vouch_entry(
    cached: dict[str, Any] | None, sid: str, st: os.stat_result
) -> SessionSummary | None:
    """The summary of index entry `cached` if it still describes log `sid` (same size and
    mtime) and holds together; None otherwise."""
    if not cached or not describes(cached, st):
        return None
    return summary_for(cached, sid)


def summary_for(
    cached: dict[str, Any], sid: str, migrated: list[str] | None = None
) -> SessionSummary | None:
    """The summary an entry holds if it holds together and is `sid`'s; None otherwise.
    An entry an older version wrote is brought up to date in place (`_older_summary`),
    and `sid` added to `migrated`: the index is to be saved."""
    try:
        summary = _summary_of(cached["summary"], cached.get("usage"))
    except (KeyError, TypeError):
        older = _older_summary(cached)
        if older is None:
            return None
        if migrated is not None:
            migrated.append(sid)
        summary = older
    return summary if summary.id == sid else None


def _older_summary(cached: dict[str, Any]) -> SessionSummary | None:
    """The summary of an entry the version before `approvals` were kept wrote, when it is
    exact without them (`SessionSummary.from_older_index`), its row brought up to date in
    `cached` (written with the next save); None when it is not one or not exact (the
    caller reads that log again, as for an entry that no longer matches its log)."""
    data = cached.get("summary")
    if type(data) is not list:
        return None  # an object: `_summary_of` read it as older already
    try:
        summary = SessionSummary.from_older_index(data)
    except (KeyError, TypeError):
        return None
    cached["summary"] = summary.to_index_row()
    return summary


_PARENT, _UPDATED = INDEX_ROW_KEYS.index("parentSession"), INDEX_ROW_KEYS.index("updated")


def _lineage_of(data: Any) -> tuple[str | None, str]:
    """An entry's source session and last activity, as its summary (a row, or an object
    in entries written before rows) holds them; (None, "") when they are not strings. A
    row of the version before `approvals` were kept is one value short (the last)."""
    if type(data) is list and len(INDEX_ROW_KEYS) - 1 <= len(data) <= len(INDEX_ROW_KEYS):
        parent, updated = data[_PARENT], data[_UPDATED]
    elif type(data) is dict:
        parent, updated = data.get("parentSession"), data.get("updated")
    else:
        return None, ""
    return (parent if type(parent) is str else None), (updated if type(updated) is str else "")


def _summary_of(data: Any, usage: object = None) -> SessionSummary:
    """An entry's summary: kept as a row (its own usage beside it, `usage`: none in
    entries written before it was kept), or as an object (entries written before rows,
    which are older than `approvals` too); KeyError or TypeError when it is neither."""
    if type(data) is list:
        return SessionSummary.from_index_row(data, OwnUsage.from_index(usage))
    return SessionSummary.from_older_index(data)


