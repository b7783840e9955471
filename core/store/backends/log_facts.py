"""The log facts beside the summary index: `<store>/index-log.json` (catalogue.py keeps
both files).

A log may have facts a loader learns by checking every line of it (`LogFacts`: its
event count and where its turn brackets stand). While size and mtime still match, a loader
may take those instead of checking each line again, as the list takes the summary. They
are kept in a file of their own, `index-log.json`, each record with the size and mtime of
the log it describes (checked on its own, like an entry of the index): every listing
decodes the whole index and needs none of them, and they are more than half its bytes.
Each record keeps them as JSON text, and a load or fork of one session decodes only its
record (`record_in`) until facts are saved: the file ends with the CRC-32 of its logs
mapping's bytes (`crc32`), and one that does not match, or has none (written before), is
decoded whole, as before.
Indexes written before kept them in their entries (`log`), text or object; those are read
as well and move to the file of facts on the next save. Those facts may include where the
log's last completed turn ends (`log.fork`: a `ForkPoint` and the byte offset just past
that `turn/end` line), so that a fork there copies the bytes without reading the log;
facts written before had none, and a fork of them reads the log as before.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import Any

import orjson

from forkwise.core.log.turns import BracketState
from forkwise.core.store.fork_point import ForkPoint

#: the version of the catalogue's files (the index and the file of facts)
INDEX_VERSION = 1


@dataclass(frozen=True, slots=True)
class LogFacts:
    """What checking every line of a log established: how many events it holds, where
    its turn brackets stand at the end and, when known, the point of its last completed
    turn (`fork`) and the file offset just past that event's line (`fork_end`, known
    when the lines before it are one per event)."""

    events: int
    open_turn: str | None
    open_turn_seq: int
    pending_approvals: dict[str, int]
    fork: ForkPoint | None = None
    fork_end: int | None = None

    @classmethod
    def of(
        cls, state: BracketState, fork: ForkPoint | None = None, fork_end: int | None = None
    ) -> LogFacts:
        if fork is None:
            fork_end = None
        return cls(
            state.last_seq,
            state.open_turn,
            state.open_turn_seq,
            dict(state.pending_approvals),
            fork,
            fork_end,
        )

    def to_index(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "events": self.events,
            "openTurn": self.open_turn,
            "openTurnSeq": self.open_turn_seq,
            "approvals": self.pending_approvals,
        }
        if self.fork is not None:
            out["fork"] = {**self.fork.to_index(), "end": self.fork_end}
        return out

    @classmethod
    def from_index(cls, data: object) -> LogFacts | None:
        """The facts an entry records, or None when it has none or they are malformed."""
        if type(data) is not dict:
            return None
        events, turn, turn_seq, approvals = (
            data.get("events"), data.get("openTurn"), data.get("openTurnSeq"),
            data.get("approvals"),
        )  # fmt: skip
        if (
            type(events) is not int
            or events < 0
            or type(turn_seq) is not int
            or not (turn is None or type(turn) is str)
            or type(approvals) is not dict
            or not all(type(k) is str and type(v) is int for k, v in approvals.items())
        ):
            return None
        fork, end = _fork_from_index(data.get("fork"), events)
        return cls(events, turn, turn_seq, approvals, fork, end)


def _fork_from_index(data: object, events: int) -> tuple[ForkPoint | None, int | None]:
    """An entry's fork point and its end offset, if known; (None, None) when it has none
    (entries written before there were any) or it does not hold together."""
    point = ForkPoint.from_index(data)
    end = data.get("end") if type(data) is dict else None
    if point is None or point.seq > events or not (end is None or type(end) is int):
        return None, None
    return point, end if end is not None and end > 0 else None


#: a file of facts as this version writes it (`logs_file`): this, the logs mapping as
#: orjson writes it, `_DIGEST` and the CRC-32 of that mapping's bytes, "}"
_LOGS_HEAD = b'{"version":%d,"logs":' % INDEX_VERSION
_DIGEST = b',"crc32":'
#: `record_in` cannot tell: the whole file is to be decoded
UNKNOWN = object()


def logs_file(logs: dict[str, dict[str, Any]]) -> bytes:
    """The file of facts: `{"version", "logs", "crc32"}`, read by a whole decode as
    before; the digest tells a reader of one record (`record_in`) that the file is whole
    as written (a damaged one is decoded whole, as before)."""
    body = orjson.dumps(logs)
    return b"".join((_LOGS_HEAD, body, _DIGEST, b"%d}" % zlib.crc32(body)))


def record_in(raw: bytes, body: tuple[int, int] | None, sid: str) -> object:
    """Session `sid`'s record in the bytes of a file of facts, decoding that record only;
    None when the file has none. `body`: where `body_of` found the logs mapping; None
    when the file is not one this version wrote and holds as written (its digest):
    another version's, a hand edit, damage — `UNKNOWN`, and the caller decodes it
    whole, as before. No file (no bytes) holds no record.

    In the mapping's text as orjson writes it, `"<sid>":{` stands only before an object
    kept under key `sid` (inside a string every quote is escaped): the record, or in the
    facts an older index kept as objects, their "fork" object — not a record (no
    "size" and "log"), so the search goes on."""
    if not raw:
        return None
    if body is None:
        return UNKNOWN
    start, end = body
    key = orjson.dumps(sid) + b":{"
    at = raw.find(key, start, end)
    while at >= 0:
        record = _value_at(raw, at + len(key) - 1)
        if record is UNKNOWN:
            return UNKNOWN
        if type(record) is dict and "size" in record and "log" in record:
            return record
        at = raw.find(key, at + len(key), end)
    return None


def body_of(raw: bytes) -> tuple[int, int] | None:
    """Where the logs mapping's text is in a file of facts (`logs_file`) whose digest
    matches it; None when the file is not of that form or does not match."""
    if not (raw.startswith(_LOGS_HEAD) and raw.endswith(b"}")):
        return None
    at = raw.rfind(_DIGEST)
    digits = raw[at + len(_DIGEST) : -1]
    if at < len(_LOGS_HEAD) or not digits.isdigit() or len(digits) > 10:
        return None
    with memoryview(raw) as whole:  # CRC-32 lets go of the GIL, a copy would not
        if zlib.crc32(whole[len(_LOGS_HEAD) : at]) != int(digits):
            return None
    return len(_LOGS_HEAD), at


def _value_at(raw: bytes, start: int) -> object:
    """The JSON object that starts at `raw[start]`: the slice from there to the first
    closing brace with which it decodes (a shorter one ends with a brace or a string
    still open: "unexpected end"); `UNKNOWN` when the object does not hold together."""
    end = raw.find(b"}", start)
    while end >= 0:
        piece = raw[start : end + 1]
        try:
            return orjson.loads(piece)
        except orjson.JSONDecodeError as exc:
            if exc.pos != len(piece):  # wrong before the slice's end: no longer one will do
                return UNKNOWN
        end = raw.find(b"}", end + 1)
    return UNKNOWN


def facts_record(st: os.stat_result, facts: LogFacts) -> dict[str, Any]:
    # kept as JSON text: only a load or fork of this one session decodes it, and a fork
    # decodes the whole file of facts (as dicts, they would cost several times as much)
    log_text = orjson.dumps(facts.to_index()).decode()
    return {"size": st.st_size, "mtime": st.st_mtime_ns, "log": log_text}


def decoded_facts(data: object) -> object:
    """An entry's log facts as decoded JSON: kept as JSON text, or as an object (entries
    written before they were kept as text); None when the text is not JSON."""
    if type(data) is not str:
        return data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None

