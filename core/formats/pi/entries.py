"""A pi session file in memory: its header, its entries as a tree, and the tree's paths.

pi (badlogic/pi-mono, `@mariozechner/pi-coding-agent`) keeps a session as JSON Lines: a
`{"type":"session",…}` header, then entries. Since format version 2 every entry has an
`id` and a `parentId`, so one file holds a tree: pi continues the path from the root to the
last entry of the file, and every other leaf is a branch someone left. Version 1 files have
no ids (one line after the other) and version 2 called custom messages `hookMessage`.

pi upgrades old files by rewriting them with random ids; Forkwise never rewrites a user's
file, so the upgrade happens here, in memory only, with ids derived from each line's bytes
(a v1 branch file that repeats its parent's lines gets the same ids for them).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..base import (
    UNREADABLE,
    FormatError,
    ReadWarning,
    read_source,
    unreadable_text,
    unreadable_warning,
)

CURRENT_VERSION = 3


@dataclass(slots=True)
class Entry:
    """One entry line of a pi file (never the header)."""

    line: int  #: 1-based line number in the file
    id: str
    parent: str | None
    type: str
    ts: str | None
    data: dict[str, Any]  #: the decoded line (v1/v2 upgraded in memory)


@dataclass(slots=True)
class PiFile:
    path: Path
    header: dict[str, Any]
    version: int
    entries: list[Entry]
    by_id: dict[str, Entry] = field(default_factory=dict)
    #: the last line had no newline and could not be decoded: pi is still writing it
    torn_tail: bool = False
    #: lines that are not JSON, kept as entries of type `UNREADABLE` ({"text": the line})
    warnings: list[ReadWarning] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    @property
    def parent_path(self) -> str | None:
        """The file this session was forked or branched from (`branchedFrom` in v1)."""
        value = self.header.get("parentSession", self.header.get("branchedFrom"))
        return value if isinstance(value, str) and value else None


def read_header(head: bytes) -> dict[str, Any] | None:
    """The pi header on the first line of `head`, or None if it is not one. A Forkwise
    store header (`created`, `seedLength`) is also `type: session`, so it is told apart."""
    first = head.split(b"\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("type") != "session":
        return None
    if not isinstance(value.get("id"), str) or not value["id"]:
        return None
    if not isinstance(value.get("timestamp"), str) or "seedLength" in value:
        return None
    return value


def load(path: Path) -> PiFile:
    """Read and check a pi session file; raises FormatError naming the 1-based line."""
    try:
        data = read_source(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    return parse(path, data)


def parse(path: Path, data: bytes) -> PiFile:
    lines = data.split(b"\n")
    torn = False
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        # no newline after the last line: pi writes whole lines, so an undecodable tail is
        # one still being written (or cut by a crash); it is left for the next read
        try:
            orjson.loads(lines[-1])
        except orjson.JSONDecodeError:
            lines.pop()
            torn = True
    if not lines:
        raise FormatError("empty file: no pi session header", path=str(path), line=1)
    header = read_header(lines[0])
    if header is None:
        raise FormatError(
            "line 1 is not a pi session header ({'type':'session','id':…,'timestamp':…})",
            path=str(path),
            line=1,
        )
    version = header.get("version", 1)
    if type(version) is not int or version < 1:
        raise FormatError(f"unknown session version {version!r}", path=str(path), line=1)
    if version > CURRENT_VERSION:
        raise FormatError(
            f"session version {version} is newer than this reader ({CURRENT_VERSION})",
            path=str(path),
            line=1,
        )
    entries: list[Entry] = []
    by_id: dict[str, Entry] = {}
    prev: str | None = None
    loads = orjson.loads
    warnings: list[ReadWarning] = []
    lost: Entry | None = None  # the line before, when it was not JSON
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        why = ""
        try:
            record = loads(raw)
        except orjson.JSONDecodeError as exc:
            record, why = None, str(exc)
        if type(record) is not dict:
            # kept where it stands, continuing the entry before it; the entry after it goes
            # on from it when it goes on from that entry too, or names an entry not in the
            # file (most likely the one this line held)
            warnings.append(unreadable_warning(path, number, why or "not a JSON object"))
            kept = f"{UNREADABLE}:{number}"
            lost = Entry(number, kept, prev, UNREADABLE, None, {"text": unreadable_text(raw)})
            entries.append(lost)
            by_id[kept] = lost
            prev = kept
            continue
        etype = record.get("type")
        if type(etype) is not str or not etype:
            raise FormatError("entry has no type", path=str(path), line=number)
        if etype == "session":
            raise FormatError("a second session header", path=str(path), line=number)
        if version >= 2:
            eid = record.get("id")
            parent = record.get("parentId")
            if type(eid) is not str or not eid:
                raise FormatError("entry has no id", path=str(path), line=number)
            if parent is not None and type(parent) is not str:
                raise FormatError("parentId must be a string or null", path=str(path), line=number)
        else:
            eid = _v1_id(raw, by_id)
            parent = prev
        if eid in by_id:
            raise FormatError(f"duplicate entry id {eid!r}", path=str(path), line=number)
        if etype == "message":
            message = record.get("message")
            if type(message) is not dict or type(message.get("role")) is not str:
                raise FormatError("message entry without a role", path=str(path), line=number)
            if version < 3 and message["role"] == "hookMessage":
                message["role"] = "custom"
        if lost is not None and (parent == lost.parent or (parent and parent not in by_id)):
            parent = lost.id  # it goes on from the line before it, or from the lost entry
        lost = None
        ts = record.get("timestamp")
        entry = Entry(number, eid, parent, etype, ts if type(ts) is str else None, record)
        entries.append(entry)
        by_id[eid] = entry
        prev = eid
    if version < 2:
        _v1_compaction_targets(entries)
    return PiFile(path, header, version, entries, by_id, torn, warnings)


def _v1_id(raw: bytes, taken: dict[str, Entry]) -> str:
    """A v1 entry's id: 8 hex digits of its line's hash (like pi's short ids), so that equal
    lines in a parent and its branch file get equal ids."""
    digest = hashlib.blake2b(raw, digest_size=8).hexdigest()
    eid = digest[:8]
    return eid if eid not in taken else digest


def line_id(raw: bytes, version: int) -> str | None:
    """The id an entry line has as this module reads it (None: not an entry line)."""
    if version < 2:
        return hashlib.blake2b(raw, digest_size=8).hexdigest()[:8]
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict or record.get("type") == "session":
        return None
    eid = record.get("id")
    return eid if type(eid) is str and eid else None


def _v1_compaction_targets(entries: list[Entry]) -> None:
    """v1 compactions name the first kept entry by its index in the file's entry list
    (the header is index 0), as pi's own upgrade reads it."""
    for entry in entries:
        if entry.type != "compaction":
            continue
        index = entry.data.get("firstKeptEntryIndex")
        if type(index) is int and 1 <= index <= len(entries):
            entry.data["firstKeptEntryId"] = entries[index - 1].id


def path_to(file: PiFile, leaf: Entry) -> list[Entry]:
    """Root → `leaf`, following parentId as pi does (a missing parent ends the walk)."""
    out: list[Entry] = []
    seen: set[str] = set()
    current: Entry | None = leaf
    while current is not None:
        if current.id in seen:
            raise FormatError(
                f"entry {current.id!r} is its own ancestor (parentId cycle)",
                path=str(file.path),
                line=current.line,
            )
        seen.add(current.id)
        out.append(current)
        parent = current.parent
        current = file.by_id.get(parent) if parent is not None else None
    out.reverse()
    return out


def leaves(file: PiFile) -> list[Entry]:
    """Entries nobody continues, in file order. The last entry of the file is always one
    of them: pi continues from it."""
    parents = {e.parent for e in file.entries if e.parent is not None}
    return [e for e in file.entries if e.id not in parents]
