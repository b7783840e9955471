"""Rows of the search index read off the logs, and how they are written into it.

Making the index from the logs has two halves of about equal cost: reading and decoding
the message lines (Python, holding the interpreter), and storing the rows and
tokenizing their text (SQLite, which lets go of the interpreter while a statement runs).
`build` runs the first half on a reader thread and the second on the caller's, so that
the two overlap. Each batch of rows goes to SQLite in one statement per table (the small
fields and the texts as two JSON arrays, unpacked by `json_each`): a statement per row
would take the interpreter back once a row and wait for the reader to give it up each
time (on the bench's 10,000 sessions, the small fields took 2.0-2.8 s bound row by row
beside the reader, 0.7-0.9 s as one statement a batch).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from forkwise.core.log.event_log import EventLog
from forkwise.core.log.events import MESSAGE, SESSION_TITLE, Event
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

#: one row: session, seq, message id, time, kind, text
Row = tuple[str, int, str | None, str, str, str]
#: rows a batch gathers before it is written (about 2 MB of text on the bench's logs).
#: Batches of 10,000 rows measured the same (interleaved runs, 3 each: 4.93 s against
#: 5.02 s, 2,000 first) and hold more in memory
BATCH_ROWS = 2_000
#: batches read ahead of the writer
READ_AHEAD = 4
#: FTS5's default: how many segments of a level are merged as rows are written (none
#: while an index is made from nothing, the segments merged by their count alone)
AUTOMERGE = 4


@dataclass(slots=True)
class Batch:
    """Rows of whole sessions, and how many events of each session they cover."""

    rows: list[Row] = field(default_factory=list)
    indexed: list[tuple[str, int]] = field(default_factory=list)
    #: the rows' small fields and their texts as JSON arrays (`pack`), or None
    meta: bytes | None = None
    texts: bytes | None = None
    #: `indexed` as a JSON array, or None
    counts: bytes | None = None

    def pack(self) -> Batch:
        """Serialize the rows for `write_batch` (left None when they cannot be: a text
        orjson refuses, such as a lone surrogate, or a NUL, kept whole only when bound)."""
        with contextlib.suppress(TypeError):
            self.counts = orjson.dumps(self.indexed)
        try:
            meta = orjson.dumps([row[:5] for row in self.rows])
            texts = orjson.dumps([row[5] for row in self.rows])
        except TypeError:
            return self
        if b"\\u0000" not in texts:
            self.meta, self.texts = meta, texts
        return self


def write_batch(db: sqlite3.Connection, batch: Batch, first: int | None = None) -> int:
    """Store a batch's rows from rowid `first` on (None: after the last row stored), index
    their text, and record the sessions' indexed counts (inside the caller's transaction).
    Returns the rowid after the batch's."""
    if first is None:
        first = int(db.execute("SELECT coalesce(max(rowid), 0) FROM msgs").fetchone()[0]) + 1
    rows = batch.rows
    if rows:
        if batch.texts is None:
            batch.pack()
        if batch.meta is None or batch.texts is None:  # bound one row at a time
            db.executemany(
                "INSERT INTO msgs(rowid, session, seq, about) VALUES (?,?,?,?)",
                [(first + i, row[0], row[1], json.dumps(row[:5])) for i, row in enumerate(rows)],
            )
            db.executemany(
                "INSERT INTO texts(rowid, text) VALUES (?,?)",
                [(first + i, row[5]) for i, row in enumerate(rows)],
            )
        else:  # one statement each: SQLite runs it without the interpreter
            db.execute(  # each row's small fields kept as their JSON array (`about`)
                "INSERT INTO msgs(rowid, session, seq, about) SELECT ? + key,"
                " json_extract(value, '$[0]'), json_extract(value, '$[1]'), value"
                " FROM json_each(?)",
                (first, batch.meta),
            )
            db.execute(
                "INSERT INTO texts(rowid, text) SELECT ? + key, value FROM json_each(?)",
                (first, batch.texts),
            )
        db.execute(
            "INSERT INTO docs(rowid, text) SELECT rowid, text FROM texts WHERE rowid >= ?",
            (first,),
        )
    if batch.counts is not None:  # one statement: a row each would take the interpreter
        db.execute(  # back from the reader once a session (0.3 s of waits on the bench)
            "INSERT OR REPLACE INTO sessions(id, indexed)"
            " SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
            (batch.counts,),
        )
    else:
        db.executemany("INSERT OR REPLACE INTO sessions(id, indexed) VALUES (?, ?)", batch.indexed)
    return first + len(rows)


def build(db: sqlite3.Connection, store: SessionStore,
          plan: Sequence[tuple[str, int | None]]) -> None:
    """Index each planned session's log after its indexed count (None: the whole log),
    reading the logs on a thread while the caller writes what was read."""
    ready: queue.Queue[Batch | BaseException | None] = queue.Queue(READ_AHEAD)
    stop = threading.Event()

    def read() -> None:
        try:
            for batch in batches(store, plan):
                if stop.is_set():
                    return
                ready.put(batch.pack())
            ready.put(None)
        except BaseException as exc:  # handed to the writer, raised there
            ready.put(exc)

    reader = threading.Thread(target=read, name="search-index-reader", daemon=True)
    reader.start()
    try:
        first = None
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            first = write_batch(db, item, first)
    finally:
        stop.set()
        while reader.is_alive():  # let a reader blocked on a full queue see `stop`
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        reader.join()


def fill_anew(db: sqlite3.Connection, store: SessionStore,
              plan: Sequence[tuple[str, int | None]]) -> None:
    """Index the planned logs into an empty database in one transaction, FTS5 segments
    merged only by their count meanwhile (later writes merge as usual)."""
    db.execute("INSERT INTO docs(docs, rank) VALUES('automerge', 0)")
    db.execute("BEGIN")
    try:
        build(db, store, plan)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    db.execute("INSERT INTO docs(docs, rank) VALUES('automerge', ?)", (AUTOMERGE,))


def batches(store: SessionStore, plan: Iterable[tuple[str, int | None]]) -> Iterator[Batch]:
    batch = Batch()
    for sid, done in plan:
        got = log_rows(store, sid, done)
        if got is None:
            continue
        rows, indexed = got
        batch.rows.extend(rows)
        batch.indexed.append((sid, indexed))
        if len(batch.rows) >= BATCH_ROWS:
            yield batch
            batch = Batch()
    if batch.indexed:
        yield batch


def log_rows(store: SessionStore, sid: str, done: int | None) -> tuple[list[Row], int] | None:
    """The rows of one log's events after `done` (None: the whole log, its header too)
    and how many events the log has; None when it is gone."""
    loaded = store.backend.load(sid)
    if loaded is None:
        return None
    header, events = loaded.header, loaded.events
    start = header.seed_length if done is None else max(done, header.seed_length)
    rows = list(header_rows(header)) if done is None else []
    rows.extend(line_rows(sid, events, start))
    return rows, len(events)


def header_rows(header: SessionHeader) -> Iterator[Row]:
    title = header.meta.get("title")
    if isinstance(title, str) and title:
        yield (header.id, 0, None, header.created, "title", title)


def event_rows(sid: str, events: Sequence[Event]) -> Iterator[Row]:
    for event in events:
        row = _row(sid, event.seq, event.type, event.ts, event.fields)
        if row is not None:
            yield row


def line_rows(sid: str, events: Sequence[Event], start: int) -> Iterator[Row]:
    """Rows of events[start:], read off their lines where the log keeps them (only lines
    that can hold a message or a title are decoded)."""
    if not isinstance(events, EventLog):
        yield from event_rows(sid, events[start:])
        return
    loads = orjson.loads
    for seq, raw in enumerate(events.lines(len(events))[start:], start + 1):
        if b"message" not in raw and b"session/title" not in raw:
            continue
        record = loads(raw)
        row = _row(sid, seq, str(record.get("type")), str(record.get("ts", "")), record)
        if row is not None:
            yield row


def _row(sid: str, seq: int, etype: str, ts: str, fields: Any) -> Row | None:
    if etype == MESSAGE:
        text = _message_words(fields.get("parts") or ())
        if not text:
            return None
        role = fields.get("role")
        message = fields.get("id")
        return (sid, seq, message if isinstance(message, str) else None, ts,
                role if isinstance(role, str) else "message", text)
    if etype == SESSION_TITLE:
        title = fields.get("title")
        return (sid, seq, None, ts, "title", title) if isinstance(title, str) and title else None
    return None


def _message_words(parts: Iterable[Any]) -> str:
    """What a message shows and calls: its text, and each tool call's name and arguments."""
    out: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            text = part.get("text", "")
            if type(text) is not str:
                text = str(text)
            if text:
                out.append(text)
        elif kind == "tool_call":
            args = part.get("args")
            out.append(f"{part.get('name', '')} {orjson.dumps(args).decode() if args else ''}")
    return out[0] if len(out) == 1 else "\n".join(out)
