"""A Gemini CLI session file read line by line, as Gemini CLI's own loader reads it, with
the history that loader throws away kept.

Lines: the first holds the metadata (`sessionId`, `projectHash`, `startTime`, `kind` …); a
line with an `id` is a message (a later line with the same id replaces the earlier one
where it stands); `{"$set": {…}}` updates the metadata, and with `messages` replaces the
whole list (a checkpoint); `{"$rewindTo": id}` drops that message and everything after it
(an id no longer there drops everything). A legacy file is one JSON document with the
metadata and `messages`. What a rewind drops is kept here as a branch: the messages as
they stood just before it. A line after the metadata that is not a JSON object (torn,
garbage) is kept where it stands as an `UNREADABLE_LINE` message, with a warning; a last
line without its newline is still being written and is left for the next read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..base import (
    FormatError,
    ReadWarning,
    read_source,
    unreadable_text,
    unreadable_warning,
)

#: the `type` of a message that stands for a line that is not JSON (its `text` the line)
UNREADABLE_LINE = "\0unreadable"


@dataclass(slots=True)
class Msg:
    """One message as it stands: its record and the line that wrote that version."""

    id: str
    record: dict[str, Any]
    line: int


@dataclass(slots=True)
class Branch:
    """What one rewind abandoned: the whole list as it stood, and where the drop began."""

    path: list[Msg]
    start: int


@dataclass(slots=True)
class GeminiFile:
    path: Path
    meta: dict[str, Any]
    messages: list[Msg]
    branches: list[Branch] = field(default_factory=list)
    #: the last line was cut off (still being written): left for the next read
    torn_tail: bool = False
    legacy: bool = False
    #: lines that are not JSON objects, kept where they stand as `UNREADABLE_LINE` messages
    warnings: list[ReadWarning] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return str(self.meta["sessionId"])


def _identity(meta: dict[str, Any], path: Path, line: int) -> None:
    if not (isinstance(meta.get("sessionId"), str) and meta["sessionId"]):
        raise FormatError("not a Gemini CLI session: no sessionId", path=str(path), line=line)


def load(path: Path) -> GeminiFile:
    try:
        data = read_source(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    if path.suffix == ".json":
        return _legacy(path, data)
    return parse(path, data)


def _legacy(path: Path, data: bytes) -> GeminiFile:
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FormatError(f"not JSON: {exc}", path=str(path), line=1) from exc
    if not isinstance(record, dict):
        raise FormatError("not a Gemini CLI session", path=str(path), line=1)
    _identity(record, path, 1)
    raw = record.get("messages")
    messages = [
        Msg(m["id"], m, 1)
        for m in (raw if isinstance(raw, list) else [])
        if isinstance(m, dict) and isinstance(m.get("id"), str)
    ]
    meta = {k: v for k, v in record.items() if k != "messages"}
    return GeminiFile(path, meta, messages, legacy=True)


def parse(path: Path, data: bytes) -> GeminiFile:
    lines = data.split(b"\n")
    torn = bool(lines) and lines[-1].strip() != b""
    meta: dict[str, Any] = {}
    current: dict[str, Msg] = {}
    branches: list[Branch] = []
    warnings: list[ReadWarning] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        why = ""
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if torn and number == len(lines):
                break  # being written: the next read sees it whole
            record, why = None, str(exc)
        if not isinstance(record, dict):
            if not meta:  # no identity yet: not a session file Gemini CLI wrote
                raise FormatError(
                    f"line {number} is not a JSON object{f': {why}' if why else ''}",
                    path=str(path),
                    line=number,
                )
            warnings.append(unreadable_warning(path, number, why or "not a JSON object"))
            kept = f"{UNREADABLE_LINE}:{number}"
            text = unreadable_text(raw)
            current[kept] = Msg(kept, {"type": UNREADABLE_LINE, "text": text}, number)
            continue
        if not meta and not isinstance(record.get("sessionId"), str):
            raise FormatError(
                "not a Gemini CLI session: the first line has no sessionId",
                path=str(path),
                line=number,
            )
        if isinstance(record.get("$rewindTo"), str):
            _rewind(current, branches, record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            mid = record["id"]
            if mid in current:
                current[mid].record, current[mid].line = record, number
            else:
                current[mid] = Msg(mid, record, number)
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                current = {
                    m["id"]: Msg(m["id"], m, number)
                    for m in update["messages"]
                    if isinstance(m, dict) and isinstance(m.get("id"), str)
                }
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for m in record.get("messages") or ():
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    current[m["id"]] = Msg(m["id"], m, number)
        # anything else Gemini CLI's loader skips too
    if not meta:
        raise FormatError("not a Gemini CLI session: empty file", path=str(path), line=1)
    _identity(meta, path, 1)
    return GeminiFile(
        path, meta, list(current.values()), branches, torn_tail=torn, warnings=warnings
    )


def _rewind(current: dict[str, Msg], branches: list[Branch], target: str) -> None:
    ordered = list(current.values())
    start = next((i for i, m in enumerate(ordered) if m.id == target), 0)
    if ordered[start:]:
        # a copy of each message: a later line may replace one of the kept ones in place
        branches.append(Branch([Msg(m.id, m.record, m.line) for m in ordered], start))
    for m in ordered[start:]:
        del current[m.id]
