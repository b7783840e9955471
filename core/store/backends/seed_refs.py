"""Seeds stored by reference in the JSON Lines backend.

An import writes every branch of an agent's file as a fork child of the line it left; its
seed, the parent's first `seedLength` events, is the parent's own lines byte for byte. A
file rewound at every turn has as many branches as turns, and copying each one's seed
stored the file's turns squared (1,500 rewinds of a 3 MB file: over a GB). Such a child's
file holds its seed by reference instead: its header says where the seed is,

    "seedLength": 120, "seedIn": {"session": "<parent id>", "events": 120,
                                  "digest": "crc32:<bytes>:<crc>"},

and the lines after the header are the child's own, from seq 121 on. The backend reads
the parent's first 120 lines in their place (checked against the digest: a parent that
changed below the reference is an error, `seed-reference-broken`, never other events),
and everything above the backend sees the whole log, exactly as a copy gives it. Before a
parent is rewritten or deleted, its referring children are made whole (`JsonlBackend`'s
`_detach_children`); a reference is never written from a user's fork (a byte copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from forkwise.core.errors import BrokenSeed, ForkwiseError
from forkwise.core.log.ids import validate_session_id
from forkwise.core.safe_read import read_head

#: the header key of a seed stored by reference
REF_KEY = "seedIn"
_REF_BYTES = b'"' + REF_KEY.encode() + b'"'
#: how many references one read may follow (a parent may itself hold its seed so)
MAX_DEPTH = 64
#: the bytes of a file read to find its header's reference (the key comes before `meta`)
_HEAD = 1 << 16


@dataclass(frozen=True, slots=True)
class SeedRef:
    """Where a child's seed is: the first `events` lines of session `session`'s log,
    whose digest (`forkwise.core.log.digest`) is `digest`."""

    session: str
    events: int
    digest: str

    def to_record(self) -> dict[str, object]:
        return {"session": self.session, "events": self.events, "digest": self.digest}


def split_header(header_raw: bytes, path: str = "") -> tuple[bytes, SeedRef | None]:
    """The header line without its reference, and the reference (None: the seed is in
    the file, the line returned as it is)."""
    if _REF_BYTES not in header_raw:
        return header_raw, None
    try:
        record = orjson.loads(header_raw)
    except orjson.JSONDecodeError:
        return header_raw, None  # the loader says what is wrong with it
    if type(record) is not dict or REF_KEY not in record:
        return header_raw, None
    ref = record.pop(REF_KEY)
    try:
        if type(ref) is not dict:
            raise ValueError("not an object")
        session, events, digest = ref.get("session"), ref.get("events"), ref.get("digest")
        validate_session_id(session)
        if type(events) is not int or events < 0 or events != record.get("seedLength"):
            raise ValueError("its events must be the header's seedLength")
        if type(digest) is not str:
            raise ValueError("no digest")
    except (ValueError, ForkwiseError) as exc:
        raise BrokenSeed(
            f"{path}, line 1: the header's {REF_KEY} is not a valid reference ({exc})",
            path=path,
            line=1,
        ) from exc
    return orjson.dumps(record), SeedRef(str(session), events, digest)


def with_ref(header_raw: bytes, ref: SeedRef) -> bytes:
    """The header line with the reference, placed after `seedLength` (before `meta`, so
    that a look at a file's first bytes finds it: `referred_to`)."""
    record = orjson.loads(header_raw)
    out: dict[str, object] = {}
    for key, value in record.items():
        out[key] = value
        if key == "seedLength":
            out[REF_KEY] = ref.to_record()
    if REF_KEY not in out:
        out[REF_KEY] = ref.to_record()
    return orjson.dumps(out)


def referred_to(path: Path) -> str | None:
    """The session a file's seed is stored in, from its first bytes; None: it holds its
    seed itself (or cannot be read: a read of it says why)."""
    try:
        head = read_head(path, _HEAD)
    except OSError:
        return None
    line = head.split(b"\n", 1)[0]
    if _REF_BYTES not in line:
        return None
    try:
        ref = split_header(line, str(path))[1]
    except BrokenSeed:
        return None
    return ref.session if ref is not None else None


def broken(path: Path, ref: SeedRef, why: str) -> BrokenSeed:
    return BrokenSeed(
        f"{path}: its first {ref.events} events are stored in session {ref.session!r}, which {why}",
        path=str(path),
        session_id=ref.session,
    )
