"""Rows of the search index read off the logs, and how they are written into it.

Making the index from the logs has two halves: reading and decoding the message lines
(Python, holding the interpreter), and storing the rows and tokenizing their text
(SQLite, which lets go of the interpreter while a statement runs). `build` runs the first
half on a reader thread and the second on the caller's, so that the two overlap.

Every statement the writer runs ends by taking the interpreter back, which waits for the
reader to give it up (up to the switch interval, 5 ms) while the reader is busy: beside a
busy Python thread, 300 statements of ~1 ms each took 1.1-1.6 s longer (4-5 ms each). So
the writer runs few statements: a batch is a few MB of text, written in two statements
(its rows with their texts, then their words into FTS5), and the sessions' counts are
written once, after the last batch: 71 statements for the bench's 10,000 sessions, where
batches of 2,000 rows and four statements each made 640. A statement per row would wait
once a row. The texts go to SQLite as one UTF-8 blob cut at offsets, the small fields as
one JSON array (`Batch.pack`): no text is escaped into JSON by Python to be unescaped by
SQLite again.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import orjson

from forkwise.core.log.event_log import EventLog
from forkwise.core.log.events import MESSAGE, SESSION_TITLE, Event
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore

#: told (sessions done, of how many) as a build goes
Progress = Callable[[int, int], None]


class Stopped(Exception):
    """A build was halted (its index closing): nothing of it is kept."""

#: one row: session, seq, message id, time, kind, text
Row = tuple[str, int, str | None, str, str, str]
#: a batch ends at this many rows or at BATCH_TEXT characters of text, whichever comes
#: first (~9,000 rows on the bench's logs: 36 batches for its 10,000 sessions)
BATCH_ROWS = 20_000
BATCH_TEXT = 8_000_000
#: batches read ahead of the writer (each holds its text once, packed)
READ_AHEAD = 2
#: FTS5's default: how many segments of a level are merged as rows are written (none
#: while an index is made from nothing, the segments merged by their count alone)
AUTOMERGE = 4

#: a packed batch's rows: [session, seq, message id, time, kind, offset, length] each,
#: its text the `length` bytes of the blob from `offset` (1-based, as substr counts)
_INSERT_PACKED = (
    "INSERT INTO msgs(rowid, session, seq, about, text) SELECT ?1 + key,"
    " json_extract(value, '$[0]'), json_extract(value, '$[1]'),"
    " json_remove(value, '$[6]', '$[5]'),"
    " CAST(substr(?3, json_extract(value, '$[5]'), json_extract(value, '$[6]')) AS TEXT)"
    " FROM json_each(?2)"
)


@dataclass(slots=True)
class Batch:
    """Rows of whole sessions, and how many events of each session they cover."""

    rows: list[Row] = field(default_factory=list)
    indexed: list[tuple[str, int]] = field(default_factory=list)
    #: characters of text in `rows`
    size: int = 0
    #: how many rows `pack` packed (they are then dropped from `rows`)
    packed: int = 0
    #: the packed rows' small fields, offsets and lengths as a JSON array, and their texts
    meta: bytes | None = None
    blob: bytes | None = None

    def pack(self) -> Batch:
        """Serialize the rows for `write_batch` and let go of them (kept as they are when
        they cannot be: a text or field that is not valid Unicode, such as a lone
        surrogate, or a text with a NUL, kept whole only when bound)."""
        rows = self.rows
        try:
            texts = [row[5].encode() for row in rows]
            blob = b"".join(texts)
            if b"\0" in blob:
                return self
            starts = accumulate(map(len, texts), initial=1)
            meta = orjson.dumps([
                (row[0], row[1], row[2], row[3], row[4], start, len(text))
                for row, text, start in zip(rows, texts, starts, strict=False)
            ])
        except (TypeError, UnicodeEncodeError):
            return self
        self.meta, self.blob, self.packed, self.rows = meta, blob, len(rows), []
        return self

    def __len__(self) -> int:
        return self.packed + len(self.rows)


def write_batch(db: sqlite3.Connection, batch: Batch, first: int | None = None) -> int:
    """Store a batch's rows from rowid `first` on (None: after the last row stored) and
    index their text (inside the caller's transaction). Returns the rowid after the
    batch's. The sessions' counts are the caller's (`write_counts`)."""
    if first is None:
        first = int(db.execute("SELECT coalesce(max(rowid), 0) FROM msgs").fetchone()[0]) + 1
    if not len(batch):
        return first
    if batch.meta is None and batch.blob is None:
        batch.pack()
    if batch.meta is not None and batch.blob is not None:
        db.execute(_INSERT_PACKED, (first, batch.meta, batch.blob))
    else:  # bound one row at a time
        db.executemany(
            "INSERT INTO msgs(rowid, session, seq, about, text) VALUES (?,?,?,?,?)",
            [(first + i, row[0], row[1], json.dumps(row[:5]), row[5])
             for i, row in enumerate(batch.rows)],
        )
    db.execute(
        "INSERT INTO docs(rowid, text) SELECT rowid, text FROM msgs WHERE rowid >= ?", (first,)
    )
    return first + len(batch)


def write_counts(db: sqlite3.Connection, indexed: Sequence[tuple[str, int]]) -> None:
    """Record how many events of each session are indexed (one statement: a row each
    would take the interpreter back from the reader once a session)."""
    try:
        counts = orjson.dumps(indexed)
    except TypeError:  # an id orjson refuses
        db.executemany("INSERT OR REPLACE INTO sessions(id, indexed) VALUES (?, ?)", indexed)
        return
    db.execute(
        "INSERT OR REPLACE INTO sessions(id, indexed)"
        " SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
        (counts,),
    )


def build(
    db: sqlite3.Connection,
    store: SessionStore,
    plan: Sequence[tuple[str, int | None]],
    halt: threading.Event | None = None,
    progress: Progress | None = None,
) -> None:
    """Index each planned session's log after its indexed count (None: the whole log),
    reading the logs on a thread while the caller writes what was read. `progress(done,
    total)`: sessions of the plan written so far, after each batch; `halt` set: Stopped
    after the batch being written (the caller's transaction is not committed)."""
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
        indexed: list[tuple[str, int]] = []
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            first = write_batch(db, item, first)
            indexed += item.indexed
            if progress is not None:
                progress(len(indexed), len(plan))
            if halt is not None and halt.is_set():
                raise Stopped("the search index's build was stopped")
        write_counts(db, indexed)
    finally:
        stop.set()
        while reader.is_alive():  # let a reader blocked on a full queue see `stop`
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        reader.join()


def fill_anew(
    db: sqlite3.Connection,
    store: SessionStore,
    plan: Sequence[tuple[str, int | None]],
    halt: threading.Event | None = None,
    progress: Progress | None = None,
) -> None:
    """Index the planned logs into an empty database in one transaction, FTS5 segments
    merged only by their count meanwhile (later writes merge as usual)."""
    db.execute("INSERT INTO docs(docs, rank) VALUES('automerge', 0)")
    db.execute("BEGIN")
    try:
        build(db, store, plan, halt, progress)
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
        batch.rows += rows
        batch.size += sum(len(row[5]) for row in rows)
        batch.indexed.append((sid, indexed))
        if len(batch.rows) >= BATCH_ROWS or batch.size >= BATCH_TEXT:
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
