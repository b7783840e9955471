"""Codex rollout files on disk: their names, their lines, and the Codex home around them.

A rollout is JSON Lines, one `{"timestamp", ["ordinal",] "type", "payload"}` object a
line, named `rollout-YYYY-MM-DDThh-mm-ss-<thread uuid>.jsonl` under
`sessions/YYYY/MM/DD/` or `archived_sessions/` of the Codex home. Older rollouts may be
compressed (`.jsonl.zst`); a thread whose history was reverted (paginated history) goes on
in a segment file `…-<thread uuid>_<segment uuid>.jsonl` whose `session_meta` names the
earlier history it builds on (`history_base`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from forkwise.core.errors import ForkwiseError, SourceTooLarge
from forkwise.core.safe_read import MAX_SESSION_BYTES

from ..base import (
    UNREADABLE,
    FormatError,
    ReadWarning,
    read_source,
    read_source_stat,
    unreadable_text,
    unreadable_warning,
)

log = logging.getLogger(__name__)

SESSIONS = "sessions"
ARCHIVED = "archived_sessions"
SESSION_INDEX = "session_index.jsonl"
_PREFIX = "rollout-"
_STAMP = len("YYYY-MM-DDThh-mm-ss")
_UUID = 36
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


#: One decoded rollout line: `(no, start, end, ts, type, payload, ordinal)` — its 1-based
#: number, where its bytes are in the file (`data[start:end]`), its time, its type, its
#: decoded payload and its ordinal (None when it has none). A tuple, not an object, and no
#: copy of its bytes: a rollout has hundreds of thousands of small lines, and an object and
#: a copy a line cost about as much as decoding them (measured).
Line = tuple[int, int, int, str, str, Any, int | None]
NO: Final = 0
START: Final = 1
END: Final = 2
TS: Final = 3
TYPE: Final = 4
PAYLOAD: Final = 5
ORDINAL: Final = 6


@dataclass(frozen=True, slots=True)
class RolloutName:
    """What a rollout file name says: the thread, the segment (if any), when it started."""

    thread_id: str
    segment: str | None
    stamp: str


def parse_name(name: str) -> RolloutName | None:
    """`rollout-<stamp>-<uuid>[_<uuid>].jsonl[.zst]` -> its parts; None for other names."""
    if not name.startswith(_PREFIX):
        return None
    for ext in (".jsonl", ".jsonl.zst"):
        if name.endswith(ext):
            stem = name[len(_PREFIX) : -len(ext)]
            break
    else:
        return None
    stamp, rest = stem[:_STAMP], stem[_STAMP + 1 :]
    thread, segment = rest[:_UUID], rest[_UUID + 1 :] or None
    if len(thread) != _UUID or thread.count("-") != 4:
        return None
    return RolloutName(thread.lower(), segment, stamp)


def read_bytes(path: Path) -> bytes:
    """The file's text, decompressed when it is a zstd frame (a `.jsonl.zst` rollout)."""
    return read_text_stat(path)[0]


def read_text_stat(path: Path) -> tuple[bytes, os.stat_result]:
    """`read_bytes`, and the file's stat as it was read."""
    try:
        data, st = read_source_stat(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    if data.startswith(_ZSTD_MAGIC):
        return _unzstd(data, path), st
    return data, st


#: what a compressed rollout may inflate to: a multiple of its own size (JSON lines
#: compress 5 to 20 times; a bomb tens of thousands of times), at least _INFLATE_FLOOR,
#: never more than a session file may hold
_INFLATE_RATIO = 1000
_INFLATE_FLOOR = 64 << 20
_INFLATE_CHUNK = 1 << 20


def inflate_limit(compressed: int) -> int:
    return min(MAX_SESSION_BYTES, max(_INFLATE_FLOOR, compressed * _INFLATE_RATIO))


def _unzstd(data: bytes, path: Path) -> bytes:
    """The frames' content, inflated a chunk at a time and refused (`source-too-large`)
    past `inflate_limit`: a 50 KB bomb inflating to 1.5 GiB must not take the import,
    and the good files read with it, down."""
    import io

    import zstandard

    limit = inflate_limit(len(data))
    parts: list[bytes] = []
    total = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(data), read_across_frames=True
        )
        while chunk := reader.read(_INFLATE_CHUNK):
            total += len(chunk)
            if total > limit:
                raise SourceTooLarge(
                    f"{path}: its {len(data)} compressed bytes inflate to more than {limit} "
                    "bytes; not read",
                    path=str(path),
                )
            parts.append(chunk)
    except zstandard.ZstdError as exc:
        raise FormatError(f"{path.name}: broken zstd data ({exc})", path=str(path)) from exc
    return b"".join(parts)


def head_text(head: bytes) -> bytes:
    """The first bytes of a file as text, decompressing the part of a zstd frame given:
    fed a few bytes at a time, and no more once `_HEAD_INFLATED` bytes came out (a bomb's
    first KiB holds hundreds of blocks of 128 KiB each)."""
    if not head.startswith(_ZSTD_MAGIC):
        return head
    import zstandard

    inflate = zstandard.ZstdDecompressor().decompressobj()
    parts: list[bytes] = []
    total = 0
    try:
        for start in range(0, len(head), 64):
            part = inflate.decompress(head[start : start + 64])
            parts.append(part)
            total += len(part)
            if total > _HEAD_INFLATED:
                break
    except zstandard.ZstdError:
        return b""
    return b"".join(parts)[:_HEAD_INFLATED]


#: what `head_text` gives at most
_HEAD_INFLATED = 1 << 20


def parse_lines(
    data: bytes, path: Path, warnings: list[ReadWarning] | None = None
) -> tuple[list[Line], bool]:
    """Every line of a rollout, parsed once. Returns the lines and whether the file ends in
    the middle of a line (Codex is writing it right now; that last fragment is left out).

    A line that is not a JSON object is an `UNREADABLE` line (its payload the line's text,
    its time the line's before it), with a warning added to `warnings`; an object without
    a string `type` and `timestamp` raises FormatError naming it."""
    torn: list[bool] = []
    lines = list(iter_lines(data, path, torn, warnings))
    return lines, bool(torn)


def iter_lines(
    data: bytes, path: Path, torn: list[bool], warnings: list[ReadWarning] | None = None
) -> Iterator[Line]:
    """The lines of `parse_lines` one at a time, so that a reader that maps them as they
    come keeps none of them; `torn` gets True when the file ends in the middle of a line.
    Each line is decoded from a view of `data`, not from a copy of its bytes."""
    loads = orjson.loads
    view = memoryview(data)
    find = data.find
    size = len(data)
    bare: bool | None = None  # the mid-2025 layout: a bare meta line, then bare items
    bare_ts = ""
    first = True
    start = 0
    no = 0
    ts = ""  # the time of the line before (for one that is not JSON)
    while start < size:
        end = find(b"\n", start)
        last = end < 0  # no newline after it: the file's last line
        if last:
            end = size
        no += 1
        if end == start:
            start = end + 1
            continue
        why = ""
        try:
            obj = loads(view[start:end])
        except orjson.JSONDecodeError as exc:
            if not data[start:end].strip():
                start = end + 1
                continue
            if last:  # cut off while Codex writes it
                torn.append(True)
                return
            obj, why = None, str(exc)
        if type(obj) is not dict:
            if warnings is not None:
                warnings.append(unreadable_warning(path, no, why or "not a JSON object"))
            yield (no, start, end, ts, UNREADABLE, unreadable_text(view[start:end]), None)
            start = end + 1
            continue
        if bare is None:
            bare = "payload" not in obj and "id" in obj and "type" not in obj
            if bare and type(obj.get("timestamp")) is str:
                bare_ts = obj["timestamp"]
        if bare:
            ts = bare_ts
            yield _bare_line(no, start, end, obj, bare_ts, first=first)
            first = False
            start = end + 1
            continue
        kind = obj.get("type")
        stamp = obj.get("timestamp")
        if type(kind) is not str or type(stamp) is not str:
            raise FormatError(
                f"line {no} is not a rollout line (needs string 'timestamp' and 'type')",
                path=str(path),
                line=no,
            )
        ts = stamp
        ordinal = obj.get("ordinal")
        yield (
            no,
            start,
            end,
            ts,
            kind,
            obj.get("payload"),
            ordinal if type(ordinal) is int else None,
        )
        first = False
        start = end + 1


def _bare_line(no: int, start: int, end: int, obj: dict[str, Any], ts: str, *, first: bool) -> Line:
    """A line of a rollout from before the `{timestamp, type, payload}` envelope (Codex
    before 0.30): the first line is the session meta itself, the others are response items
    or `{"record_type": "state"}` markers; none has a time of its own but the meta's."""
    if first:
        return (no, start, end, ts, "session_meta", obj, None)
    if "record_type" in obj:
        return (no, start, end, ts, str(obj["record_type"]), obj, None)
    return (no, start, end, ts, "response_item", obj, None)


def codex_home(path: Path) -> Path | None:
    """The Codex home a rollout lives in: the folder holding its `sessions/` or
    `archived_sessions/` ancestor; None for a file outside that layout."""
    for parent in path.parents:
        if parent.name in (SESSIONS, ARCHIVED):
            return parent.parent
    return None


def rollout_files(folder: Path, *, special: bool = False) -> Iterator[Path]:
    """Every rollout under `folder`, in name order (which is creation order). `special`:
    also what is named so but is no regular file (a FIFO, a device; never opened here),
    for an import to report it rather than pass over it."""
    found: list[Path] = []
    for pattern in ("rollout-*.jsonl", "rollout-*.jsonl.zst"):
        found.extend(
            p for p in folder.rglob(pattern) if (not p.is_dir() if special else p.is_file())
        )
    found.sort(key=lambda p: (p.name, str(p)))
    yield from found


def thread_names(home: Path) -> dict[str, str]:
    """Thread names from `session_index.jsonl` (append-only; the last entry for an id wins).
    A damaged line is skipped: the index is a convenience, not a session."""
    try:
        data = read_source(home / SESSION_INDEX)
    except OSError:
        return {}
    except ForkwiseError as exc:  # a FIFO, device or link out there: not read
        log.warning("%s", exc.message)
        return {}
    names: dict[str, str] = {}
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            tid, name = entry.get("id"), entry.get("thread_name")
            if isinstance(tid, str) and isinstance(name, str) and name.strip():
                names[tid.lower()] = name.strip()
    return names
