"""Notifications (and listings: FreshRows) the in-process carrier may hand over without
copying them.

The in-process carrier (host/carriers.py) copies every message through an orjson round
trip, so that a client never holds the host's objects and gets the shapes a socket would
give. For the notes of a turn (its state, streamed text, the events of each append and
the catalogue row) that copy was ~8% of the process CPU of an offline turn through host
and client (8 sessions x 50 turns: 140-142 ms without any note copied, 151-160 ms with
all copied, measured side by side). A `FreshNote` is made for one delivery, of JSON
values only (decoded from the wire form, or plain scalars and strings), and kept by no
one once sent: the first in-process connection that gets it takes it as it is (`take`);
any other connection copies it as before, so two clients never share one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

N = TypeVar("N", bound=Mapping[str, Any])


class FreshNote(dict[str, Any]):
    """A notification of fresh JSON values only; `taken` once a connection owns it."""

    __slots__ = ("taken",)

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.taken = False


def fresh(note: N) -> N:
    """`note` (a typed notification) made a FreshNote: for one delivery, of JSON values
    only, kept by no one once sent."""
    return cast(N, FreshNote(dict(note)))


def take(params: object) -> dict[str, Any] | None:
    """`params` as a plain dict for the first connection that takes it; None when it is
    not a FreshNote or another connection took it already (then it must be copied)."""
    if type(params) is not FreshNote or params.taken:
        return None
    params.taken = True
    return dict(params)


class FreshRows(list[dict[str, Any]]):
    """A reply's result made for that reply alone: rows (a listing's `summary_row`s), each
    a dict of the types a JSON decoder gives, every list and dict in it its own, held by
    no one once returned. The in-process carrier hands them over without the wire's round
    trip once they encode (host/wire_codec.py `as_sent`: the wire's checks, in C); `taken`
    once a connection owns them."""

    __slots__ = ("taken",)

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__(rows)
        self.taken = False


def fresh_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` (made for one reply, kept by no one once returned) marked FreshRows."""
    return FreshRows(rows)


def take_rows(result: object) -> list[dict[str, Any]] | None:
    """`result` as a plain list for the first connection that takes it; None when it is
    not FreshRows or was taken already (then it must be copied)."""
    if type(result) is not FreshRows or result.taken:
        return None
    result.taken = True
    return list(result)
