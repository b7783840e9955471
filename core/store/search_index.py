"""A full-text index of every session's messages, tool calls and titles, beside the store.

SQLite FTS5 (Python's sqlite3) in `<store>/search.sqlite`: a plain table `msgs` holds one
row per indexed event (session and seq; `about`: the JSON array [session, seq, message
id, time, kind], read back only for the rows a search returns, so that a build stores it
as it comes instead of picking it apart; and its text), and the FTS5 table `docs` indexes
that text (external content: the text is stored once). Queries are words
and a prefix, never phrases, so the index keeps no positions (`detail=none`: the build
tokenizes each text and writes one entry per word and row, nothing more) and, as hits
are ordered by rowid and never ranked, no text lengths (`columnsize=0`); snippets are cut
from the stored text for the few rows a search returns. A table `sessions`
says how many events of each session are indexed, so that the index is brought up to date
from the logs (`sync`) after it was missing, deleted or left behind, and kept current
from the store's change events (append, import, fork, truncate, delete) once it is.

A session's copied prefix (a fork's seed) is not indexed again: its words are found in
the session they were written in. The index is a cache of derived data: losing it loses nothing,
and `rebuild` makes it anew from the logs. So it is written without waiting for the disk
(`synchronous=OFF`). An index made from nothing (the first sync, `rebuild`) is made in a
file of its own beside the index (`.search.sqlite.build`), without a journal and without
merging FTS5 segments while it is filled, and put in the index's place once complete and
fsynced (the folder fsynced after the rename): a build that is interrupted, by a kill or a
power cut, leaves the index that was there before (or none), never a half one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from forkwise.core.store.atomic import fsync_dir, fsync_path
from forkwise.core.store.session import (
    EventsAppended,
    SessionCreated,
    SessionDisposed,
    SessionSummary,
    SessionTruncated,
    StoreEvent,
)
from forkwise.core.store.session_store import SessionStore

if TYPE_CHECKING:  # SQLite and the build are imported when the index is first opened: every
    # host makes a SearchIndex, and a one-shot command never opens it (python -X importtime)
    import sqlite3

    from forkwise.core.store.search_build import Progress, Row

log = logging.getLogger(__name__)

SCHEMA_VERSION = 4
#: what marks the matched words in a snippet
MARK_OPEN, MARK_CLOSE = "«", "»"
MAX_LIMIT = 500
#: what a query may hold: a search holds the index's lock while it runs (a query of
#: 100,000 words held it 7.6 s, and every other search waited)
MAX_QUERY_CHARS = 1000
MAX_QUERY_WORDS = 32
#: seconds between the fdatasyncs of a build file while it is filled
WRITE_OUT_EVERY = 0.25
#: bytes a page: a row of up to ~2 KB (most messages) is kept in its page, where 4 KB pages
#: spill a row of over ~1 KB to an overflow page of its own (the bench's index: 360 MB
#: against 407 MB, its rows stored in 0.08 s less of 0.9 s)
PAGE_SIZE = 8192

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, indexed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS msgs(
    rowid INTEGER PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT NULL,
    about TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS msgs_session ON msgs(session, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    text, content='msgs', content_rowid='rowid', detail='none', columnsize=0,
    tokenize="unicode61 remove_diacritics 2 tokenchars '_'");
"""
#: words of a query as the tokenizer sees them (letters, digits, underscore)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_id: str
    seq: int
    message_id: str | None
    ts: str
    kind: str  # user, assistant, title
    snippet: str


class SearchIndex:
    """The index of one store; every method may be called from any thread (one lock).

    Until the first `sync`, the store's changes are not applied (a one-shot command's host
    never pays for the index); `sync` catches up from the logs, then changes are applied
    as they are committed. A `sync` runs beside the store's writers, never in their way:
    changes committed meanwhile are queued and applied after it (each is idempotent
    against what the sync read)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self.ready = False
        self._state = threading.Lock()  # guards `_syncing` and `_queued`, held briefly
        self._syncing = False
        self._queued: list[StoreEvent] = []
        #: set by `close`: a sync under way stops after its batch (`search_build.Stopped`)
        self._halt = threading.Event()
        #: one sync at a time (a search while the build in the background runs waits for
        #: it, then finds the index current)
        self._one_sync = threading.Lock()

    # --- the database -----------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        if self._db is None:
            target = str(self.path) if self.path is not None else ":memory:"
            db = _connect(target)
            try:
                db.executescript(_SCHEMA)
                found = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if found is not None and found[0] != str(SCHEMA_VERSION):
                    db.close()
                    self._drop_file()
                    return self._open()
            except sqlite3.DatabaseError:  # a corrupt file: the logs have everything
                db.close()
                self._drop_file()
                return self._open()
            db.execute("PRAGMA synchronous=OFF")  # derived data: rebuilt if ever lost
            # after synchronous=OFF: otherwise the switch to WAL fsyncs the whole file
            db.execute("PRAGMA journal_mode=WAL")  # (0.18-0.22 s after a build on the bench)
            db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
            self._db = db
        return self._db

    def _drop_file(self) -> None:
        if self.path is not None:
            _unlink_db(self.path)

    def _build_path(self) -> Path:
        assert self.path is not None
        return self.path.with_name(f".{self.path.name}.build")  # a temp name of the store

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._open()
            db.execute("BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the database; a sync under way (a build in the background) stops after
        the batch it is writing, so that closing waits for one batch, not the build."""
        self._halt.set()
        self._close_db()

    def _close_db(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self.ready = False

    # --- keeping it current -----------------------------------------------------------

    def attach(self, store: SessionStore) -> Callable[[], None]:
        """Apply the store's committed changes from now on; returns an unsubscribe."""
        return store.subscribe(self.on_change)

    def on_change(self, change: StoreEvent) -> None:
        """A committed change (called by the store's writer: it never waits on a sync)."""
        with self._state:
            if self._syncing:
                self._queued.append(change)
                return
            if not self.ready:
                return  # `sync` reads the logs when the index is first used
        with self._lock:
            self._apply_logged(change)

    def _apply_logged(self, change: StoreEvent) -> None:
        import sqlite3

        try:
            self._apply(change)
        except sqlite3.Error:
            log.exception("search index: %s of %s not applied", change.kind, change.session_id)
            self.ready = False  # the next search brings it up to date from the logs

    def _apply(self, change: StoreEvent) -> None:
        from forkwise.core.store.search_build import event_rows, header_rows

        sid = change.session_id
        if isinstance(change, SessionCreated):
            with self._write() as db:
                _forget(db, sid)
                rows = [*header_rows(change.header), *event_rows(sid, change.events)]
                last = change.header.seed_length + len(change.events)
                _insert(db, sid, rows, last)
        elif isinstance(change, EventsAppended) and change.events:
            with self._write() as db:
                found = db.execute("SELECT indexed FROM sessions WHERE id=?", (sid,)).fetchone()
                done = int(found[0]) if found is not None else 0
                fresh = [e for e in change.events if e.seq > done]  # `sync` read the rest
                if fresh:
                    _insert(db, sid, event_rows(sid, fresh), fresh[-1].seq)
        elif isinstance(change, SessionTruncated):
            with self._write() as db:
                _forget(db, sid, after=change.through)
                db.execute("UPDATE sessions SET indexed=? WHERE id=?", (change.through, sid))
        elif isinstance(change, SessionDisposed):
            with self._write() as db:
                _forget(db, sid)

    def sync(self, store: SessionStore, progress: Progress | None = None) -> int:
        """Bring the index up to date with the store's logs; returns how many sessions
        were (re)indexed. Sessions are compared by their event counts. `progress(done,
        total)` as sessions are indexed; raises `Stopped` when `close` halted it."""
        return self._sync(store, anew=False, progress=progress)

    def rebuild(self, store: SessionStore) -> int:
        """Make the index anew from the logs (the file is replaced once the new one is
        complete)."""
        return self._sync(store, anew=True)

    def _sync(self, store: SessionStore, anew: bool, progress: Progress | None = None) -> int:
        waited = not self._one_sync.acquire(blocking=False)
        if waited:
            self._one_sync.acquire()
        try:
            if waited and self.ready and not anew:
                return 0  # brought up to date by the sync this one waited for
            return self._sync_now(store, anew, progress)
        finally:
            self._one_sync.release()

    def _sync_now(self, store: SessionStore, anew: bool, progress: Progress | None) -> int:
        if self._halt.is_set():
            from forkwise.core.store.search_build import Stopped

            raise Stopped("the search index is closed")
        with self._state:
            self._syncing, self._queued = True, []
        try:
            with self._lock:
                if anew and self.path is None:
                    self._close_db()  # a new database in memory
                db = self._open()
                known = {} if anew else dict(
                    db.execute("SELECT id, indexed FROM sessions").fetchall())
                summaries = {s.id: s for s in store.list()}
                if known:
                    work = self._catch_up(store, known, summaries, progress)
                else:
                    work = self._build_anew(store, summaries, progress)
            while True:  # what was committed while the logs were read
                with self._state:
                    queued, self._queued = self._queued, []
                    if not queued:
                        self._syncing = False
                        self.ready = True
                        return work
                with self._lock:
                    for change in queued:
                        self._apply_logged(change)
        finally:
            with self._state:
                self._syncing = False

    def _catch_up(
        self,
        store: SessionStore,
        known: dict[str, int],
        summaries: dict[str, SessionSummary],
        progress: Progress | None = None,
    ) -> int:
        """Index what the logs have beyond `known` (counts per session); one transaction."""
        from forkwise.core.store.search_build import build

        plan: list[tuple[str, int | None]] = []
        with self._write() as db:
            for gone in set(known) - set(summaries):
                _forget(db, gone)
            for sid, summary in summaries.items():
                done = known.get(sid)
                if done == summary.events:
                    continue
                if done is not None and done > summary.events:  # cut back: read anew
                    _forget(db, sid)
                    done = None
                plan.append((sid, done))
            build(db, store, plan, self._halt, progress)
        return len(plan)

    def _build_anew(
        self,
        store: SessionStore,
        summaries: dict[str, SessionSummary],
        progress: Progress | None = None,
    ) -> int:
        """Index every log into an empty database: in memory, the index's own; on disk, a
        build file moved over the index once complete (then opened as the index)."""
        from forkwise.core.store.search_build import fill_anew

        plan: list[tuple[str, int | None]] = [(sid, None) for sid in summaries]
        if self.path is None:
            db = self._open()
            db.execute("PRAGMA journal_mode=OFF")
            try:
                fill_anew(db, store, plan, self._halt, progress)
            finally:
                db.execute("PRAGMA journal_mode=WAL")
            return len(plan)
        target = self._build_path()
        _unlink_db(target)  # what an interrupted build left
        try:
            db = _connect(str(target))
            try:
                db.execute("PRAGMA journal_mode=OFF")  # nobody reads it until it is whole
                db.execute("PRAGMA synchronous=OFF")
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                with _written_out_meanwhile(target):
                    fill_anew(db, store, plan, self._halt, progress)
            finally:
                db.close()
            # on disk whole before it has the index's name, and the name durable after:
            # a power cut leaves the old index or the complete new one (written without
            # a journal, a part of the new one would be a damaged file under the name)
            fsync_path(target)
            self._close_db()
            _unlink_db(self.path, journals_only=True)  # not the old one's WAL on the new
            os.replace(target, self.path)
            fsync_dir(self.path.parent)
        except BaseException:
            _unlink_db(target)
            raise
        self._open()
        return len(plan)

    # --- asking it --------------------------------------------------------------------

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Events whose text has every word of `query` (the last one as a prefix), each
        with a snippet around the words: those that have the last word whole first, then
        those where it only begins a word ("module 37" finds "module 37" before "module
        370"), the latest indexed first in each. A hit whose whole text a later one of
        the same session already has is left out: a session's title is often its first
        question too, and it may be both in its header and in a title event (three rows
        of the same line, where the latest, a message, opens at it)."""
        check_query(query)
        whole, match = fts_query(query, prefix=False), fts_query(query)
        if whole is None or match is None:
            return []
        limit = max(1, min(int(limit), MAX_LIMIT))
        rows: list[tuple[int, str, str]] = []
        with self._lock:
            db = self._open()
            for words_match in (whole, match):
                rows += db.execute(
                    "SELECT docs.rowid, m.about, m.text FROM docs"
                    " JOIN msgs m ON m.rowid = docs.rowid"
                    " WHERE docs MATCH ? ORDER BY docs.rowid DESC LIMIT ?",
                    (words_match, 2 * limit),  # room for hits left out as repeats
                ).fetchall()
        words = [w.casefold() for w in _WORD.findall(query)]
        hits: list[SearchHit] = []
        said: set[tuple[str, str]] = set()
        seen: set[int] = set()
        for rowid, about, text in rows:
            if rowid in seen:  # a whole-word hit, found again as a prefix hit
                continue
            seen.add(rowid)
            sid, seq, message, ts, kind = json.loads(about)
            hit = SearchHit(str(sid), int(seq), message, str(ts), str(kind), snippet(text, words))
            if (hit.session_id, text) in said:
                continue
            said.add((hit.session_id, text))
            hits.append(hit)
            if len(hits) == limit:
                break
        return hits


def snippet(text: str, words: Sequence[str], width: int = 120) -> str:
    """About `width` characters of `text` around the first of `words` found in it (each
    a word start, the last a prefix), the words found marked with « and »."""
    flat = " ".join(text.split())
    folded = flat.casefold()
    spans: list[tuple[int, int]] = []
    for i, word in enumerate(words):
        last = i == len(words) - 1
        pattern = r"(?<!\w)" + re.escape(word) + (r"\w*" if last else r"(?!\w)")
        spans.extend(m.span() for m in re.finditer(pattern, folded))
    spans.sort()
    first = spans[0][0] if spans else 0
    start = max(0, first - width // 3)
    end = min(len(flat), start + width)
    out, at = [], start
    for a, b in spans:
        if a < at or b > end:
            continue
        out += [flat[at:a], MARK_OPEN, flat[a:b], MARK_CLOSE]
        at = b
    out.append(flat[at:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(flat) else "")


def check_query(query: str) -> None:
    """Refuse a query longer than a person types (`query-too-long`)."""
    from forkwise.core.errors import QueryTooLong

    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(
            f"a search has at most {MAX_QUERY_CHARS} characters", limit=MAX_QUERY_CHARS
        )
    if len(_WORD.findall(query)) > MAX_QUERY_WORDS:
        raise QueryTooLong(f"a search has at most {MAX_QUERY_WORDS} words", limit=MAX_QUERY_WORDS)


def fts_query(query: str, *, prefix: bool = True) -> str | None:
    """The FTS5 query for what a person typed: each word quoted (nothing they type is
    query syntax), all of them required, the last one a prefix (`prefix`). None for no
    words."""
    words = _WORD.findall(query)
    if not words:
        return None
    quoted = [f'"{w}"' for w in words]
    if prefix:
        quoted[-1] += "*"
    return " ".join(quoted)


# --- the file and rows ---------------------------------------------------------------


def _connect(target: str) -> sqlite3.Connection:
    import sqlite3

    if target != ":memory:":
        _claim(Path(target))
    db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
    db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new database only
    return db


#: the index holds the full text of every session: the owner's alone, as the logs are
INDEX_MODE = 0o600


def _claim(path: Path) -> None:
    """Make `path` a regular file of the index's mode before SQLite opens it: a link there
    is removed (SQLite would write through it), and so are a FIFO, socket or device
    (opening one would block or never end); a folder is set aside, never deleted (the
    index is derived data: it is rebuilt). A file that is there keeps its content, its
    mode made private (an index made 0644 by an earlier version)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        os.replace(path, path.with_name(f"{path.name}.aside-{os.urandom(4).hex()}"))
        mode = None
    elif mode is not None and not stat.S_ISREG(mode):
        _unlink_db(path)
        mode = None
    if mode is None:
        with contextlib.suppress(FileExistsError):  # made meanwhile by another opener
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             INDEX_MODE))  # fmt: skip
    elif stat.S_IMODE(mode) & 0o077:
        os.chmod(path, INDEX_MODE, follow_symlinks=False)
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these without a check
        side = Path(str(path) + suffix)
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.lstat(side).st_mode):
                if stat.S_ISDIR(os.lstat(side).st_mode):
                    os.replace(side, side.with_name(f"{side.name}.aside-{os.urandom(4).hex()}"))
                else:
                    side.unlink()


def _unlink_db(path: Path, *, journals_only: bool = False) -> None:
    """Remove a database file and its journal or WAL files (`journals_only`: only those)."""
    suffixes = ("-wal", "-shm", "-journal")
    for suffix in suffixes if journals_only else ("", *suffixes):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()


@contextlib.contextmanager
def _written_out_meanwhile(path: Path, every: float = WRITE_OUT_EVERY) -> Iterator[None]:
    """fdatasync the file at `path` every `every` seconds on a thread while the block
    runs: the disk writes the build out while it is being made, and the fsync before its
    rename waits only for the rest."""
    stop = threading.Event()
    fd = os.open(path, os.O_RDONLY)

    def write_out() -> None:
        while not stop.wait(every):
            try:
                os.fdatasync(fd)
            except OSError:  # the fsync before the rename says so
                return

    thread = threading.Thread(target=write_out, name="search-index-write-out", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        os.close(fd)


def _forget(db: sqlite3.Connection, sid: str, after: int | None = None) -> None:
    """Drop a session's rows (those after seq `after`, or all with its entry)."""
    cut = -1 if after is None else after
    db.execute(
        "INSERT INTO docs(docs, rowid, text)"
        " SELECT 'delete', rowid, text FROM msgs WHERE session=? AND seq>?",
        (sid, cut),
    )
    db.execute("DELETE FROM msgs WHERE session=? AND seq>?", (sid, cut))
    if after is None:
        db.execute("DELETE FROM sessions WHERE id=?", (sid,))


def _insert(db: sqlite3.Connection, sid: str, rows: Iterable[Row], indexed: int) -> None:
    from forkwise.core.store.search_build import Batch, write_batch, write_counts

    write_batch(db, Batch(list(rows)))
    write_counts(db, [(sid, indexed)])
