"""The summary index beside the logs: `<store>/index.json`, and the log facts beside it
(`<store>/index-log.json`).

It only ever saves work: each entry records the size and mtime of the log it summarizes,
and an entry that does not match its file is recomputed from the file. A missing or
unreadable index is rebuilt; the logs are always the truth.

An entry's summary is a row (`SessionSummary.to_index_row`; entries written before hold an
object, read as well): `index_entries.py`.

Beside it, the log facts (`log_facts.py`): what a loader learns by checking every line of
a log, kept in a file of their own, each record with the size and mtime of its log; a
load or fork of one session reads its record alone (up to `RECORDS_ALONE` of them).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.event_log import gc_paused
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.backends.index_entries import (
    describes,
    entry_lineage,
    index_entry,
    stated,
    summary_for,
    vouch_entry,
)
from forkwise.core.store.backends.log_facts import (
    INDEX_VERSION,
    UNKNOWN,
    LogFacts,
    body_of,
    decoded_facts,
    facts_record,
    logs_file,
    record_in,
)
from forkwise.core.store.backends.parallel_fold import fold_all, processes_for
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.writer_lock import while_free

log = logging.getLogger(__name__)
#: log-facts records a catalogue reads alone before it decodes the whole file of them
RECORDS_ALONE = 8
Progress = Callable[[int, int], None]


#: what a full read of one log gives the catalogue
Summarize = Callable[[Path], tuple[SessionSummary, LogFacts | None]]


#: told each time the index is written, with its entries and the written file's stat
Saved = Callable[[Path, dict[str, dict[str, Any]], os.stat_result], None]

#: the replies a session's log counts (`session_tokens(...).replies`; none when it cannot
#: be read): what of a fork's first turn its source counts (`OwnUsage.resolved`)
Counted = Callable[[str], frozenset[str]]


class Catalogue:
    """`writable`: this process holds the writer lock. A reader's catalogue given `lock`
    (the store's lock file) saves what it computed while it can take that lock without
    waiting, and saves nothing while another process holds it."""

    def __init__(
        self,
        path: Path,
        writable: bool,
        saved: Saved | None = None,
        lock: Path | None = None,
        counted: Counted | None = None,
    ) -> None:
        self.path = path
        #: how a fork's usage head is checked before it is kept (none: kept unchecked)
        self.counted = counted
        self.lock = lock
        #: what follows the index (its head, index_head.py): told after each write of it
        self.saved = saved
        #: the log facts, in a file of their own beside the index (`index-log.json`)
        self.log_path = path.with_name(f"{path.stem}-log{path.suffix}")
        self.writable = writable
        self._entries: dict[str, dict[str, Any]] | None = None
        #: sid -> {"size", "mtime", "log"}; decoded only when facts are to be saved
        self._logs: dict[str, dict[str, Any]] | None = None
        #: the file of facts' bytes as read, while not decoded: a load or fork of one
        #: session decodes that session's record only (`record_in`)
        self._logs_raw: bytes | None = None
        #: where the logs mapping is in those bytes, once its digest matched (`body_of`)
        self._logs_body: tuple[int, int] | None = None
        #: records read alone so far (`_log_of`): past `RECORDS_ALONE`, the file is decoded
        self._records_read = 0
        self._logs_changed = False
        #: the facts an index written before kept in its entries, as records
        self._legacy: dict[str, dict[str, Any]] = {}
        #: `held` entered and not left: saves wait for the last to leave (`_unsaved`)
        self._holds = 0
        self._unsaved = False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Save what is learnt while entered once, on leaving: an import of many sessions
        indexes them in batches, and saving the whole index at each batch made an import
        of n sessions write O(n²) bytes (a first import of 10,000 sessions: 84 s)."""
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds and self._unsaved:
                self._unsaved = False
                self._save()

    def forget_loaded(self) -> None:
        """Let go of what was read (saved already: every change is saved when made); read
        again if asked for more. A closed store's index would otherwise live on, and be
        walked by every pass of the cyclic collector, until the process ends."""
        self._entries, self._logs, self._logs_changed = None, None, False
        self._logs_raw, self._logs_body, self._records_read = None, None, 0
        self._legacy = {}

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            sessions = _read_index(self.path, "sessions")
            for sid, entry in sessions.items():
                if type(entry) is not dict:
                    continue
                if "log" in entry:  # written before the facts had a file of their own
                    log_record = {k: entry.get(k) for k in ("size", "mtime")}
                    log_record["log"] = entry.pop("log")
                    self._legacy[sid] = log_record
                self._entries[sid] = entry
        return self._entries

    def _load_logs(self) -> dict[str, dict[str, Any]]:
        """The log facts' records; an older index's (in its entries) win: they were
        written after any file of facts an older version could not know of."""
        if self._logs is None:
            self._load()
            raw = self._logs_raw if self._logs_raw is not None else _read_raw(self.log_path)
            self._logs_raw, self._logs_body = None, None
            records = _index_in(raw, self.log_path, "logs")
            self._logs = {k: v for k, v in records.items() if type(v) is dict}
            if self._legacy:
                self._logs.update(self._legacy)
                self._logs_changed = True  # moved to the file of facts on the next save
        return self._logs

    def _raw_logs(self) -> bytes:
        """The file of facts' bytes, read once (b"" when missing or unreadable)."""
        if self._logs_raw is None:
            self._logs_raw = _read_raw(self.log_path)
            self._logs_body = body_of(self._logs_raw)
        return self._logs_raw

    def _log_of(self, sid: str) -> dict[str, Any] | None:
        """One session's facts record. Until something is saved, only its record is
        decoded: decoding all of them (10,000 sessions: 6 MB, 5-16 ms) made a process's
        first load of a session cost ~25 times its second, with the GIL held throughout
        (the app's first page-downs waited for it). The same record as the whole file's
        decode gives, or the whole file is decoded (`_load_logs`): an older index's facts
        win, and a file not of the form this version writes is read as before. Each
        record read alone searches the file's bytes (~1-2 ms at 10,000 sessions): a
        process that reads many decodes the file once instead."""
        if self._logs is None and self._records_read < RECORDS_ALONE:
            self._load()
            if sid in self._legacy:
                return self._legacy[sid]
            self._records_read += 1
            found = record_in(self._raw_logs(), self._logs_body, sid)
            if found is not UNKNOWN:
                return found if type(found) is dict else None
        return self._load_logs().get(sid)

    def _set_log(self, sid: str, st: os.stat_result, facts: LogFacts | None) -> None:
        logs = self._load_logs()
        self._logs_changed = True
        if facts is None:
            logs.pop(sid, None)
        else:
            logs[sid] = facts_record(st, facts)

    def entries(self) -> dict[str, dict[str, Any]]:
        """The index's entries as read (empty when it is missing or unreadable)."""
        return self._load()

    def summaries(
        self,
        entries: Sequence[os.DirEntry[str]],
        summarize: Summarize,
        progress: Progress | None = None,
    ) -> list[SessionSummary]:
        with gc_paused():  # one kept summary a session, nothing cyclic
            return self._summaries(entries, summarize, progress)

    def _summaries(
        self,
        entries: Sequence[os.DirEntry[str]],
        summarize: Summarize,
        progress: Progress | None,
    ) -> list[SessionSummary]:
        # one pass, no call per log but the summary's own: it runs for every session of
        # every listing (`stated` and `vouch_entry`, inlined); the logs the index does not
        # cover are read after it, on more than one core when they are many (`_read_logs`)
        index = self._load()
        get = index.get
        out: list[SessionSummary | None] = []
        todo: list[_Unread] = []
        migrated: list[str] = []  # entries an older version wrote, brought up to date
        for n, entry in enumerate(entries, start=1):
            try:
                st = entry.stat()
            except OSError:
                continue  # gone meanwhile
            sid = entry.name[: -len(".jsonl")]
            cached = get(sid)
            summary = None
            if (
                cached is not None
                and cached.get("size") == st.st_size
                and cached.get("mtime") == st.st_mtime_ns
            ):
                summary = summary_for(cached, sid, migrated)
            if summary is None:
                todo.append(_Unread(len(out), n, sid, entry.path, st))
            elif summary.usage is None:  # kept before usage was: the log says it, once
                todo.append(_Unread(len(out), n, sid, entry.path, st, summary))
            out.append(summary)
        sources: dict[str, frozenset[str]] = {}
        for unread, (read, facts) in zip(
            todo, _read_logs(todo, summarize, progress, len(entries)), strict=True
        ):
            if unread.kept is not None and read.error is None:
                read = replace(unread.kept, usage=read.usage)  # noqa: PLW2901
            summary = self._resolved(read, sources)
            index[unread.sid] = index_entry(unread.st, summary)
            self._set_log(unread.sid, unread.st, facts)
            out[unread.at] = summary
        if todo or migrated:
            self._save()
        if progress is not None and len(todo) >= 250:
            progress(len(entries), len(entries))
        return cast("list[SessionSummary]", out)  # every None was replaced above

    def vouched(self, entries: Sequence[os.DirEntry[str]]) -> list[SessionSummary]:
        """The summaries the index holds for the logs it still matches (size and mtime),
        reading no log and saving nothing: what a listing will say about them (a log the
        index does not match, or does not know, is left out)."""
        with gc_paused():
            index = self._load()
            out: list[SessionSummary] = []
            for _, _, sid, st in stated(entries):
                summary = vouch_entry(index.get(sid), sid, st)
                if summary is not None:
                    out.append(summary)
            return out

    def lineage(self) -> tuple[list[str], dict[str, list[str]]]:
        """The sessions the index holds at the top of their lineage (their source is not
        in it), most recently active first, and the sessions beneath each one; read from
        the entries as they are (`vouch` checks one against its log)."""
        return entry_lineage(self._load())

    def vouch(self, sid: str, st: os.stat_result) -> SessionSummary | None:
        """The summary the index holds for log `sid` if it still matches (`st`)."""
        return vouch_entry(self._load().get(sid), sid, st)

    def checked(self, sid: str, st: os.stat_result) -> tuple[SessionSummary, LogFacts] | None:
        """The summary and log facts of an entry that still matches its file, if any (the
        entry and the facts' record each match `st`)."""
        cached = self._load().get(sid)
        if cached is None or not describes(cached, st):
            return None
        record = self._log_of(sid)
        if record is None or not describes(record, st):
            return None
        facts = LogFacts.from_index(decoded_facts(record.get("log")))
        if facts is None:
            return None
        summary = summary_for(cached, sid)
        if summary is None or summary.events != facts.events or summary.error is not None:
            return None
        return summary, facts

    def remember(
        self,
        sessions_dir: Path,
        records: Sequence[tuple[SessionSummary, LogFacts]],
        forget: Sequence[str] = (),
    ) -> None:
        """Record summaries and log facts the store has itself (sessions it had loaded);
        the entries of `forget` go (their files changed behind the store's back)."""
        if not records and not forget:
            return
        index, logs = self._load(), self._load_logs()
        self._logs_changed = True
        sources: dict[str, frozenset[str]] = {}
        for sid in forget:
            index.pop(sid, None)
            logs.pop(sid, None)
        for summary, facts in records:
            try:
                st = (sessions_dir / f"{summary.id}.jsonl").stat()
            except OSError:
                index.pop(summary.id, None)
                logs.pop(summary.id, None)
                continue
            index[summary.id] = index_entry(st, self._resolved(summary, sources))
            self._set_log(summary.id, st, facts)
        self._save()

    def _resolved(
        self, summary: SessionSummary, sources: dict[str, frozenset[str]]
    ) -> SessionSummary:
        """`summary` with its usage head checked against its source's replies (read once
        per source in `sources`), so that a listing prices it from the index alone."""
        usage, source = summary.usage, summary.parent_session
        if usage is None or not usage.head or self.counted is None:
            return summary
        if source is None:
            counted: frozenset[str] = frozenset()
        elif (counted_of := sources.get(source)) is None:
            counted = sources[source] = self.counted(source)
        else:
            counted = counted_of
        try:
            return replace(summary, usage=usage.resolved(counted))
        except TypeError:
            return replace(summary, usage=None)

    def _save(self) -> None:
        if self._entries is None:
            return
        if self._holds:
            self._unsaved = True
            return
        if self.writable:
            self._write_all(self._entries)
        elif self.lock is not None:
            entries = self._entries
            while_free(self.lock, lambda: self._write_all(entries))

    def _write_all(self, entries: dict[str, dict[str, Any]]) -> None:
        if self._legacy:
            self._load_logs()  # an older index's facts move to their own file
        # caches: not made durable (each entry is checked against its log, and an index a
        # crash left unreadable is rebuilt); the logs they describe are durable already.
        # The index first: facts whose entry a crash left out are never taken
        written = self._write(
            self.path, orjson.dumps({"version": INDEX_VERSION, "sessions": entries})
        )
        if written is not None and self.saved is not None:
            self.saved(self.path, entries, written)
        logs = self._logs
        if (
            logs is not None
            and self._logs_changed
            and self._write(self.log_path, logs_file(logs)) is not None
        ):
            self._logs_changed = False
            self._legacy.clear()

    def _write(self, path: Path, content: bytes) -> os.stat_result | None:
        """The written file's stat; None when it could not be written."""
        try:
            return replace_file(path, content)
        except OSError as exc:  # the index is a cache: failing to save it loses nothing
            log.warning("could not save the catalogue %s: %s", path, exc)
            return None


def _read_index(path: Path, key: str) -> dict[str, Any]:
    """The mapping under `key` of the index file in `path`; empty when the file is missing,
    unreadable or of another version."""
    return _index_in(_read_raw(path), path, key)


def _read_raw(path: Path) -> bytes:
    """The bytes of the index file in `path`; b"" when it is missing or unreadable."""
    try:
        return read_regular(path)[0]  # no link, no FIFO's wait
    except FileNotFoundError:
        return b""
    except OSError as exc:
        log.warning("ignoring unreadable catalogue %s: %s", path, exc)
        return b""


def _index_in(raw: bytes, path: Path, key: str) -> dict[str, Any]:
    """`_read_index` of the bytes `raw` read from `path`."""
    if not raw:
        return {}
    try:
        with gc_paused():  # ~0.5 KB a session, all of it kept
            data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        log.warning("ignoring unreadable catalogue %s: %s", path, exc)
        return {}
    found = data.get(key) if isinstance(data, dict) else None
    if isinstance(found, dict) and data.get("version") == INDEX_VERSION:
        return found
    return {}


class _Unread(NamedTuple):
    """A log the index does not cover: where its summary goes in the listing (`at`), its
    position among the folder's entries (from 1, for progress), id, path and stat; `kept`:
    the summary an entry kept without usage (the log gives the usage only)."""

    at: int
    n: int
    sid: str
    path: str
    st: os.stat_result
    kept: SessionSummary | None = None


def _read_logs(
    todo: Sequence[_Unread], summarize: Summarize, progress: Progress | None, total: int
) -> Iterator[tuple[SessionSummary, LogFacts | None]]:
    """Each log of `todo` read in full (`_summarize_or_error`), in order, each given as
    soon as it is read (not all kept: their facts become text as they come); in more than
    one process when they are many bytes (`parallel_fold`). `progress(n, total)` every
    250 logs read, `n` the position among the folder's entries of the last one read."""
    if not todo:
        return iter(())

    def one(i: int) -> tuple[SessionSummary, LogFacts | None]:
        return _summarize_or_error(todo[i].sid, Path(todo[i].path), summarize)

    sizes = [u.st.st_size for u in todo]
    told = None if progress is None else _every_250(todo, progress, total)
    return fold_all(len(todo), one, sizes, processes_for(sum(sizes)), told)


def _every_250(todo: Sequence[_Unread], progress: Progress, total: int) -> Callable[[int], None]:
    """`progress` told each time another 250 logs of `todo` have been read."""
    told = 0

    def done(count: int) -> None:
        nonlocal told
        if count // 250 > told // 250:
            progress(todo[count - 1].n, total)
        told = count

    return done


def _summarize_or_error(
    sid: str, path: Path, summarize: Summarize
) -> tuple[SessionSummary, LogFacts | None]:
    try:
        return summarize(path)
    except ForkwiseError as exc:
        error = {"code": exc.code, "message": exc.message}
    except OSError as exc:
        error = {"code": "storage-error", "message": str(exc)}
    return SessionSummary(id=sid, created="", cwd="", error=error), None
