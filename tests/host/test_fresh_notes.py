"""A turn's notes reach in-process clients without the carrier's copy
(runtime/fresh_notes.py): each client still holds objects of its own, shaped as off the
wire, and what a client does to them reaches neither the store nor another client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from polling import until

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host

from .conftest import TIMEOUT

Note = dict[str, Any]


def spoiler(seen: list[Note], shapes: list[bool]) -> Callable[[Note], None]:
    """Keeps each note as it came, and whether it had a decoder's types only, then
    scribbles over what it was given."""

    def receive(note: Note) -> None:
        seen.append(orjson.loads(orjson.dumps(note)))
        shapes.append(only_json(note))
        scribble(note)

    return receive


def scribble(value: object) -> None:
    """Every string, number and flag in `value` (but a note's kind) made "scribbled"."""
    items = value.items() if isinstance(value, dict) else enumerate(value)  # type: ignore[arg-type]
    for key, child in list(items):
        if isinstance(child, dict | list):
            scribble(child)
        elif key != "kind":
            value[key] = "scribbled"  # type: ignore[index]


def scribbled(value: object) -> bool:
    if isinstance(value, dict):
        return any(scribbled(v) for v in value.values())
    if isinstance(value, list):
        return any(scribbled(v) for v in value)
    return value == "scribbled"


def only_json(value: object) -> bool:
    """Exactly the types a decoder gives (no subclass, no tuple)."""
    if type(value) is dict:
        return all(type(k) is str and only_json(v) for k, v in value.items())
    if type(value) is list:
        return all(only_json(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


@pytest.mark.asyncio
async def test_clients_own_the_notes_of_an_append(tmp_path: Path) -> None:
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    first = await Client.in_process(host)
    second = await Client.in_process(host)
    try:
        sid = (await first.create_session(title="notes"))["id"]
        seen: tuple[list[Note], list[Note]] = ([], [])
        shapes: list[bool] = []
        raw: list[Note] = []
        await first.subscribe(spoiler(seen[0], shapes))
        await second.subscribe(spoiler(seen[1], shapes))
        await first.subscribe(raw.append)  # after the spoiler: what it was left with

        outcome = await asyncio.wait_for(first.prompt_and_wait(sid, "what is in there"), TIMEOUT)
        assert outcome["status"] == "completed"
        # the notes of the last append come on a later loop turn
        await until(lambda: all(any(n["kind"] == "session/events" for n in s) for s in seen),
                    what="every client's events")

        on_disk = [
            orjson.loads(line)
            for line in (tmp_path / "store" / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
        ][1:]
        for notes in seen:  # each client got the events as written, whatever the other did
            got = [e for n in notes if n["kind"] == "session/events" for e in n["events"]]
            assert got
            assert got[0]["type"] == "turn/start"  # the turn, from its first event
            assert got == on_disk[got[0]["seq"] - 1 :]
            rows = [n["summary"] for n in notes if n["kind"] == "catalogue/upsert"]
            assert rows
            assert rows[-1]["title"] == "notes"
            # the turn's state and its streamed text, as sent
            assert {n["kind"] for n in notes} >= {"session/turn", "session/delta"}
            assert not any(scribbled(n) for n in notes)
        # they were the client's own objects, shaped as a decoder makes them
        assert len(shapes) == len(seen[0]) + len(seen[1])
        assert all(shapes)
        assert all(scribbled(n) for n in raw if n["kind"] != "catalogue/remove")
        # and the host's own copy of the session was left alone
        assert [e.to_record() for e in host.store.get(sid).events] == on_disk
        assert host.store.summary(sid).title == "notes"
        assert (await second.events(sid)) == on_disk
    finally:
        await first.close()
        await second.close()
        await host.close()
