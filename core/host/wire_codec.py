"""JSON-RPC messages as the wire carries them: their encoding and decoding, the checks
a request gets before it is read, the copy an in-process carrier makes (so both sides
see a socket's shapes), and the size limits of a request and of an answer."""

from __future__ import annotations

from typing import Any, Final

import orjson

from forkwise.core.errors import RpcError
from forkwise.core.log.event_log import gc_paused
from forkwise.core.log.text import check_text, find_invalid
from forkwise.core.safe_read import MAX_SESSION_BYTES

Json = dict[str, Any]

#: what a client may send the host in one message (a request: a prompt, a setting)
MAX_MESSAGE: Final = 16 * 1024 * 1024
#: what the host may send a client in one message, and what a client reads: an answer
#: carries whole events, and one event may be as large as a session file (an imported
#: tool output of 20 MB); the host never sends more, the client accepts that much
MAX_REPLY: Final = 2 * MAX_SESSION_BYTES


def encode(message: Json) -> bytes:
    try:
        return orjson.dumps(message, default=str)
    except TypeError as exc:
        found = find_invalid(message.get("params", message.get("result")))
        if found is not None:  # a path or name that is not UTF-8: say which (log/text.py)
            check_text(found[1], found[0])
        raise RpcError(f"cannot encode a message: {exc}") from exc


def decode(data: bytes) -> Any:
    """A message off the wire. A context of 100,000 events is ~40 MB of JSON whose
    containers are all kept: the cyclic collector is paused meanwhile (each of its passes
    would walk all of them; decoded JSON holds no cycle)."""
    if len(data) < 1 << 20:
        return orjson.loads(data)
    with gc_paused():
        return orjson.loads(data)


#: the members of a request whose value decides what it does
_MEMBERS: Final = ("jsonrpc", "id", "method", "params")


def named_twice(data: bytes) -> str | None:
    """The member of a request object named twice (`"method"` twice: which one runs
    would be the decoder's choice, and a filter reading the first one sees another
    request than the host, which takes the last), or None. Only a message where such a
    name appears twice at all is decoded again, keeping the pairs."""
    if not any(data.count(b'"%s"' % name.encode()) > 1 for name in _MEMBERS):
        return None
    import json

    top: list[list[tuple[str, Any]]] = []

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        top.append(found)  # the outermost object is the last one made
        return dict(found)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except ValueError:
        return None
    if not top:
        return None
    names = [name for name, _ in top[-1]]
    return next((n for n in _MEMBERS if names.count(n) > 1), None)


def copied(message: Json) -> Json:
    """A message as the other side of a socket would get it: neither side holds the
    other's objects."""
    decoded: Json = decode(encode(message))
    return decoded


#: what a value orjson would encode as something else must raise instead of (a subclass,
#: a dataclass, a date): the default, `str`, is not given
_CHECKS: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def as_sent(rows: list[Json]) -> list[Json] | None:
    """FreshRows (fresh_notes.py) as they are when the wire would deliver them alike, or
    None (then they are copied as any message, and fail as a socket's would). They are
    encoded, which checks in C what the wire checks (text that is not UTF-8, an integer
    out of range, a value of a type JSON has not); the decode, ~70% of the round trip, is
    skipped: 100,000 rows (56 MB of JSON) took 0.16 s to encode and 0.37 s to decode."""
    try:
        orjson.dumps(rows, option=_CHECKS)
    except TypeError:
        return None
    return rows
