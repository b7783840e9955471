"""Replay checkpoints of long sessions, kept beside the store.

Opening a long session for its next prompt (or `sessions context`) needs the replay fold
of its whole log: for 100,000 events that is decoding some 60,000 lines and building the
transcript, about twice the time of merely decoding the file. A checkpoint is where the
fold stood when a writer last replayed the session (`Replayer.checkpoint`), so the next
reader loads that and folds only what was appended since.

It is a cache, never the record: `<folder>/<session id>.json`, written whole (a temporary
file renamed over the old one, not fsynced: one lost in a crash is made again). It names
how many events it covers and the digest of their lines (log/digest.py), and is used only
while the log still starts with exactly those lines; a truncated, replaced or rewritten
log, a damaged or foreign file are passed over and the log is folded from its start.
Writers make checkpoints, for logs of at least MIN_EVENTS events; so does a reader given the
store's lock file, while no process holds that lock (it takes it for the write).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.digest import prefix_digest
from forkwise.core.log.event_log import gc_paused, head
from forkwise.core.log.ids import validate_session_id
from forkwise.core.safe_read import MAX_SESSION_BYTES, open_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.session import Session
from forkwise.core.store.store_dir import make_private_dir
from forkwise.core.store.writer_lock import while_free

if TYPE_CHECKING:  # imported when a session is first replayed: a listing replays none
    from forkwise.core.log.replay import Replayer

log = logging.getLogger(__name__)

#: 2: transcripts keep OpenAI's encrypted reasoning (a version-1 checkpoint lacks it)
VERSION = 2
#: a shorter log folds in about the time its checkpoint would take to read and check
MIN_EVENTS = 10_000
#: a checkpoint is made again once this many events were appended after it
REFRESH_EVENTS = 5_000
#: transcript messages a line of the checkpoint file (see `_encoded`)
CHUNK = 1_000
#: read buffer of a checkpoint: about one of its lines. A line at a time, the memory of
#: one is reused for the next; the whole file read and split takes twice the file in fresh
#: pages, and the kernel's page faults cost as much as decoding (~0.04 s of 0.11 s for a
#: 100,000-event session's)
_READ_BUFFER = 1 << 21
#: the keys a checkpoint's state has, each with the JSON type it must be
_STATE_TYPES: dict[str, type | tuple[type, ...]] = {
    "lastSeq": int,
    "parentSession": (str, type(None)),
    "seedLength": int,
    "messageSeqs": list,
    "messageIds": list,
    "transcript": list,
    "transcriptSeqs": list,
    "title": (str, type(None)),
    "model": (dict, type(None)),
    "forkedFrom": (dict, type(None)),
    "turnStatus": dict,
    "answeredCalls": list,
}


class Due(NamedTuple):
    """A checkpoint to write: the fold's state (`Replayer.checkpoint`, copied) over the
    log of `snap`."""

    snap: Session
    state: dict[str, Any]


class ReplayCache:
    """Checkpoints in `folder` (None: none are kept or read); `writable`: this process may
    make them; a read-only host given `lock` (the store's writer lock file) makes them while
    it can take that lock without waiting, else only reads what a writer left."""

    def __init__(
        self,
        folder: Path | None,
        *,
        writable: bool,
        lock: Path | None = None,
        min_events: int = MIN_EVENTS,
        refresh_events: int = REFRESH_EVENTS,
    ) -> None:
        self.folder = folder
        self.writable = writable and folder is not None
        self.lock = None if self.writable or folder is None else lock
        self.min_events = min_events
        self.refresh_events = refresh_events

    def replayer(self, snap: Session) -> Replayer:
        """The replay fold of `snap`, caught up to its last event (`fold`), its checkpoint
        written first when one is due."""
        replayer, due = self.fold(snap)
        if due is not None:
            self.write(due)
        return replayer

    def fold(self, snap: Session) -> tuple[Replayer, Due | None]:
        """The replay fold of `snap`, caught up to its last event: from a checkpoint that
        covers a prefix of its log when there is one, else from the start; and, for a
        writer, the checkpoint to `write` when a long log (`min_events`) has none that
        covers all but `refresh_events` of it. The fold's state is copied into it as it
        is now, so that the replayer can fold on while the checkpoint waits to be
        written (after the turn that needed the replay, say)."""
        from forkwise.core.log.replay import Replayer

        events = snap.events
        replayer = self._load(snap)
        covered = 0 if replayer is None else replayer.last_seq
        if replayer is None:
            replayer = Replayer(snap.header.parent_session, snap.header.seed_length)
        replayer.catch_up(events)
        if not (
            (self.writable or self.lock is not None)
            and len(events) >= self.min_events
            and len(events) - covered >= self.refresh_events
        ):
            return replayer, None
        state = replayer.checkpoint()
        if state is None:
            return replayer, None  # a turn is open: the next replay between turns makes it
        copied = {k: list(v) if isinstance(v, list) else v for k, v in state.items()}
        copied["turnStatus"] = dict(state["turnStatus"])
        return replayer, Due(snap, copied)

    def forget(self, session_id: str) -> None:
        """Drop the session's checkpoint (the session was deleted)."""
        if self.writable and self.folder is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.folder / f"{session_id}.json")

    def _path(self, session_id: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{session_id}.json"

    def _load(self, snap: Session) -> Replayer | None:
        path = self._path(snap.id)
        if path is None:
            return None
        try:
            fd = open_regular(path)
        except OSError:
            return None  # none yet, or not a file this reads
        with open(fd, "rb", buffering=_READ_BUFFER) as lines:
            try:
                if os.fstat(fd).st_size > MAX_SESSION_BYTES:
                    raise ValueError("larger than any log it could be of")
                with gc_paused():
                    doc = _decoded(lines)
                state = _checked(doc, snap)
            except (
                OSError,
                orjson.JSONDecodeError,
                ForkwiseError,
                ValueError,
                TypeError,
                KeyError,
            ) as exc:
                log.info("replay checkpoint %s passed over: %s", path, exc)
                return None
        if state is None:
            return None
        from forkwise.core.log.replay import Replayer

        return Replayer.restore(state, snap.events)

    def write(self, due: Due) -> None:
        """Write a checkpoint `fold` found due (a cache: a failure is logged, not raised)."""
        snap, state = due
        path = self._path(snap.id)
        if path is None or self.folder is None:
            return
        covered = state["lastSeq"]
        doc = {
            "version": VERSION,
            "session": snap.id,
            "events": covered,
            "digest": prefix_digest(head(snap.events, covered)),
            "state": state,
        }
        folder = self.folder

        def put() -> None:
            make_private_dir(folder)
            replace_file(path, _encoded(doc))

        try:
            if self.lock is not None:
                while_free(self.lock, put)  # a reader: only while no writer can change it
            else:
                put()
        except (OSError, TypeError) as exc:  # a cache: the session is unaffected
            log.warning("could not write the replay checkpoint %s: %s", path, exc)


def _encoded(doc: dict[str, Any]) -> bytes:
    """The checkpoint as lines: the document without its transcript, then the transcript
    CHUNK messages a line. Encoding or decoding one large document holds the interpreter
    for ~0.1 s, during which no other thread runs (the app's event loop among them); a
    line at a time it is let go between lines."""
    state = doc["state"]
    transcript = state["transcript"]
    head_doc = {**doc, "state": {**state, "transcript": len(transcript)}}
    lines = [orjson.dumps(head_doc)]
    lines += [orjson.dumps(transcript[i : i + CHUNK]) for i in range(0, len(transcript), CHUNK)]
    return b"\n".join(lines) + b"\n"


def _decoded(lines: Iterable[bytes]) -> dict[str, Any]:
    """The document `_encoded` wrote, from its lines. Raises ValueError (or a JSON error)
    for another."""
    rest = iter(lines)
    doc = orjson.loads(next(rest, b""))
    if not isinstance(doc, dict) or not isinstance(doc.get("state"), dict):
        raise ValueError("not a replay checkpoint")
    count = doc["state"].get("transcript")
    if not isinstance(count, int):
        raise ValueError("no transcript count")
    transcript: list[Any] = []
    for line in rest:
        if line and not line.isspace():
            chunk = orjson.loads(line)
            if not isinstance(chunk, list):
                raise ValueError("a transcript line is not a list")
            transcript += chunk
    if len(transcript) != count:
        raise ValueError(f"{len(transcript)} transcript messages, the checkpoint says {count}")
    doc["state"]["transcript"] = transcript
    return doc


def _checked(doc: Any, snap: Session) -> dict[str, Any] | None:
    """The state of a checkpoint document when it is one of this session's log as it is
    now; None when it is of another session or log. Raises ValueError for a damaged one."""
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError("not a replay checkpoint of this version")
    state = doc["state"]
    if not isinstance(state, dict):
        raise ValueError("no state")
    for key, kind in _STATE_TYPES.items():
        if not isinstance(state[key], kind):
            raise ValueError(f"{key} is not a {kind}")
    covered = doc["events"]
    header = snap.header
    if (
        validate_session_id(doc["session"]) != snap.id
        or state["lastSeq"] != covered
        or state["parentSession"] != header.parent_session
        or state["seedLength"] != header.seed_length
        or not 0 < covered <= len(snap.events)
    ):
        return None
    if doc["digest"] != prefix_digest(head(snap.events, covered)):
        return None  # the log was rewritten below what the checkpoint covers
    return state

