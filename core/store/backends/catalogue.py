"""The summary index beside the logs: `<store>/index.json`, and the log facts beside it
(`<store>/index-log.json`).

It only ever saves work: each entry records the size and mtime of the log it summarizes,
and an entry that does not match its file is recomputed from the file. A missing or
unreadable index is rebuilt; the logs are always the truth.

An entry's summary is a row (`SessionSummary.to_index_row`; entries written before hold an
object, read as well).

A log may also have facts a loader learns by checking every line of it (`LogFacts`: its
event count and where its turn brackets stand). While size and mtime still match, a loader
may take those instead of checking each line again, as the list takes the summary. They
are kept in a file of their own, `index-log.json`, each record with the size and mtime of
the log it describes (checked on its own, like an entry of the index): every listing
decodes the whole index and needs none of them, and they are more than half its bytes.
Each record keeps them as JSON text, and a load or fork of one session decodes only its
record (`_record_in`) until facts are saved: the file ends with the CRC-32 of its logs
mapping's bytes (`crc32`), and one that does not match, or has none (written before), is
decoded whole, as before.
Indexes written before kept them in their entries (`log`), text or object; those are read
as well and move to the file of facts on the next save. Those facts may include where the
log's last completed turn ends (`log.fork`: a `ForkPoint` and the byte offset just past
that `turn/end` line), so that a fork there copies the bytes without reading the log;
facts written before had none, and a fork of them reads the log as before.
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.event_log import gc_paused
from forkwise.core.log.turns import BracketState
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file
from forkwise.core.store.backends.parallel_fold import fold_all, processes_for
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import INDEX_ROW_KEYS, SessionSummary

log = logging.getLogger(__name__)
INDEX_VERSION = 1
#: log-facts records a catalogue reads alone before it decodes the whole file of them
RECORDS_ALONE = 8
Progress = Callable[[int, int], None]


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


#: what a full read of one log gives the catalogue
Summarize = Callable[[Path], tuple[SessionSummary, LogFacts | None]]


#: told each time the index is written, with its entries and the written file's stat
Saved = Callable[[Path, dict[str, dict[str, Any]], os.stat_result], None]


class Catalogue:
    def __init__(self, path: Path, writable: bool, saved: Saved | None = None) -> None:
        self.path = path
        #: what follows the index (its head, index_head.py): told after each write of it
        self.saved = saved
        #: the log facts, in a file of their own beside the index (`index-log.json`)
        self.log_path = path.with_name(f"{path.stem}-log{path.suffix}")
        self.writable = writable
        self._entries: dict[str, dict[str, Any]] | None = None
        #: sid -> {"size", "mtime", "log"}; decoded only when facts are to be saved
        self._logs: dict[str, dict[str, Any]] | None = None
        #: the file of facts' bytes as read, while not decoded: a load or fork of one
        #: session decodes that session's record only (`_record_in`)
        self._logs_raw: bytes | None = None
        #: where the logs mapping is in those bytes, once its digest matched (`_body_of`)
        self._logs_body: tuple[int, int] | None = None
        #: records read alone so far (`_log_of`): past `RECORDS_ALONE`, the file is decoded
        self._records_read = 0
        self._logs_changed = False
        #: the facts an index written before kept in its entries, as records
        self._legacy: dict[str, dict[str, Any]] = {}

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
            self._logs_body = _body_of(self._logs_raw)
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
            found = _record_in(self._raw_logs(), self._logs_body, sid)
            if found is not _UNKNOWN:
                return found if type(found) is dict else None
        return self._load_logs().get(sid)

    def _set_log(self, sid: str, st: os.stat_result, facts: LogFacts | None) -> None:
        logs = self._load_logs()
        self._logs_changed = True
        if facts is None:
            logs.pop(sid, None)
        else:
            logs[sid] = _log_entry(st, facts)

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
        # every listing (`_stated` and `vouch_entry`, inlined); the logs the index does not
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
                summary = _summary_for(cached, sid, migrated)
            if summary is None:
                todo.append(_Unread(len(out), n, sid, entry.path, st))
            out.append(summary)
        for unread, (summary, facts) in zip(
            todo, _read_logs(todo, summarize, progress, len(entries)), strict=True
        ):
            index[unread.sid] = _entry(unread.st, summary)
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
            for _, _, sid, st in _stated(entries):
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
        if cached is None or not _describes(cached, st):
            return None
        record = self._log_of(sid)
        if record is None or not _describes(record, st):
            return None
        facts = LogFacts.from_index(_log_record(record.get("log")))
        if facts is None:
            return None
        summary = _summary_for(cached, sid)
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
            index[summary.id] = _entry(st, summary)
            self._set_log(summary.id, st, facts)
        self._save()

    def _save(self) -> None:
        if not self.writable or self._entries is None:
            return
        if self._legacy:
            self._load_logs()  # an older index's facts move to their own file
        # caches: not made durable (each entry is checked against its log, and an index a
        # crash left unreadable is rebuilt); the logs they describe are durable already.
        # The index first: facts whose entry a crash left out are never taken
        written = self._write(
            self.path, orjson.dumps({"version": INDEX_VERSION, "sessions": self._entries})
        )
        if written is not None and self.saved is not None:
            self.saved(self.path, self._entries, written)
        logs = self._logs
        if (
            logs is not None
            and self._logs_changed
            and self._write(self.log_path, _logs_file(logs)) is not None
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


#: a file of facts as this version writes it (`_logs_file`): this, the logs mapping as
#: orjson writes it, `_DIGEST` and the CRC-32 of that mapping's bytes, "}"
_LOGS_HEAD = b'{"version":%d,"logs":' % INDEX_VERSION
_DIGEST = b',"crc32":'
#: `_record_in` cannot tell: the whole file is to be decoded
_UNKNOWN = object()


def _logs_file(logs: dict[str, dict[str, Any]]) -> bytes:
    """The file of facts: `{"version", "logs", "crc32"}`, read by a whole decode as
    before; the digest tells a reader of one record (`_record_in`) that the file is whole
    as written (a damaged one is decoded whole, as before)."""
    body = orjson.dumps(logs)
    return b"".join((_LOGS_HEAD, body, _DIGEST, b"%d}" % zlib.crc32(body)))


def _record_in(raw: bytes, body: tuple[int, int] | None, sid: str) -> object:
    """Session `sid`'s record in the bytes of a file of facts, decoding that record only;
    None when the file has none. `body`: where `_body_of` found the logs mapping; None
    when the file is not one this version wrote and holds as written (its digest):
    another version's, a hand edit, damage — `_UNKNOWN`, and the caller decodes it
    whole, as before. No file (no bytes) holds no record.

    In the mapping's text as orjson writes it, `"<sid>":{` stands only before an object
    kept under key `sid` (inside a string every quote is escaped): the record, or in the
    facts an older index kept as objects, their "fork" object — not a record (no
    "size" and "log"), so the search goes on."""
    if not raw:
        return None
    if body is None:
        return _UNKNOWN
    start, end = body
    key = orjson.dumps(sid) + b":{"
    at = raw.find(key, start, end)
    while at >= 0:
        record = _value_at(raw, at + len(key) - 1)
        if record is _UNKNOWN:
            return _UNKNOWN
        if type(record) is dict and "size" in record and "log" in record:
            return record
        at = raw.find(key, at + len(key), end)
    return None


def _body_of(raw: bytes) -> tuple[int, int] | None:
    """Where the logs mapping's text is in a file of facts (`_logs_file`) whose digest
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
    still open: "unexpected end"); `_UNKNOWN` when the object does not hold together."""
    end = raw.find(b"}", start)
    while end >= 0:
        piece = raw[start : end + 1]
        try:
            return orjson.loads(piece)
        except orjson.JSONDecodeError as exc:
            if exc.pos != len(piece):  # wrong before the slice's end: no longer one will do
                return _UNKNOWN
        end = raw.find(b"}", end + 1)
    return _UNKNOWN


def _entry(st: os.stat_result, summary: SessionSummary) -> dict[str, Any]:
    return {"size": st.st_size, "mtime": st.st_mtime_ns, "summary": summary.to_index_row()}


def _log_entry(st: os.stat_result, facts: LogFacts) -> dict[str, Any]:
    # kept as JSON text: only a load or fork of this one session decodes it, and a fork
    # decodes the whole file of facts (as dicts, they would cost several times as much)
    log_text = orjson.dumps(facts.to_index()).decode()
    return {"size": st.st_size, "mtime": st.st_mtime_ns, "log": log_text}


def _describes(record: dict[str, Any], st: os.stat_result) -> bool:
    """Whether an index record was made for the log as `st` finds it (size and mtime)."""
    return record.get("size") == st.st_size and record.get("mtime") == st.st_mtime_ns


def _stated(
    entries: Sequence[os.DirEntry[str]],
) -> Iterator[tuple[int, os.DirEntry[str], str, os.stat_result]]:
    """(position from 1, entry, session id, stat) of each log that can be stat'ed (one
    that went meanwhile is passed over)."""
    for n, entry in enumerate(entries, start=1):
        try:
            st = entry.stat()
        except OSError:
            continue
        yield n, entry, entry.name[: -len(".jsonl")], st


def entry_lineage(
    index: dict[str, dict[str, Any]],
) -> tuple[list[str], dict[str, list[str]]]:
    """`Catalogue.lineage` of these entries: the tops (their source is not among them),
    most recently active first, and the sessions beneath each one, in the entries' order."""
    tops: list[tuple[str, str]] = []
    children: dict[str, list[str]] = {}
    for sid, cached in index.items():
        parent, updated = _lineage_of(cached.get("summary"))
        if parent is not None and parent != sid and parent in index:
            children.setdefault(parent, []).append(sid)
        else:
            tops.append((updated, sid))
    tops.sort(reverse=True)
    return [sid for _updated, sid in tops], children


def vouch_entry(
    cached: dict[str, Any] | None, sid: str, st: os.stat_result
) -> SessionSummary | None:
    """The summary of index entry `cached` if it still describes log `sid` (same size and
    mtime) and holds together; None otherwise."""
    if not cached or not _describes(cached, st):
        return None
    return _summary_for(cached, sid)


def _summary_for(
    cached: dict[str, Any], sid: str, migrated: list[str] | None = None
) -> SessionSummary | None:
    """The summary an entry holds if it holds together and is `sid`'s; None otherwise.
    An entry an older version wrote is brought up to date in place (`_older_summary`),
    and `sid` added to `migrated`: the index is to be saved."""
    try:
        summary = _summary_of(cached["summary"])
    except (KeyError, TypeError):
        older = _older_summary(cached)
        if older is None:
            return None
        if migrated is not None:
            migrated.append(sid)
        summary = older
    return summary if summary.id == sid else None


def _older_summary(cached: dict[str, Any]) -> SessionSummary | None:
    """The summary of an entry the version before `approvals` were kept wrote, when it is
    exact without them (`SessionSummary.from_older_index`), its row brought up to date in
    `cached` (written with the next save); None when it is not one or not exact (the
    caller reads that log again, as for an entry that no longer matches its log)."""
    data = cached.get("summary")
    if type(data) is not list:
        return None  # an object: `_summary_of` read it as older already
    try:
        summary = SessionSummary.from_older_index(data)
    except (KeyError, TypeError):
        return None
    cached["summary"] = summary.to_index_row()
    return summary


_PARENT, _UPDATED = INDEX_ROW_KEYS.index("parentSession"), INDEX_ROW_KEYS.index("updated")


def _lineage_of(data: Any) -> tuple[str | None, str]:
    """An entry's source session and last activity, as its summary (a row, or an object
    in entries written before rows) holds them; (None, "") when they are not strings. A
    row of the version before `approvals` were kept is one value short (the last)."""
    if type(data) is list and len(INDEX_ROW_KEYS) - 1 <= len(data) <= len(INDEX_ROW_KEYS):
        parent, updated = data[_PARENT], data[_UPDATED]
    elif type(data) is dict:
        parent, updated = data.get("parentSession"), data.get("updated")
    else:
        return None, ""
    return (parent if type(parent) is str else None), (updated if type(updated) is str else "")


def _summary_of(data: Any) -> SessionSummary:
    """An entry's summary: kept as a row, or as an object (entries written before rows,
    which are older than `approvals` too); KeyError or TypeError when it is neither."""
    if type(data) is list:
        return SessionSummary.from_index_row(data)
    return SessionSummary.from_older_index(data)


def _log_record(data: object) -> object:
    """An entry's log facts as decoded JSON: kept as JSON text, or as an object (entries
    written before they were kept as text); None when the text is not JSON."""
    if type(data) is not str:
        return data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


class _Unread(NamedTuple):
    """A log the index does not cover: where its summary goes in the listing (`at`), its
    position among the folder's entries (from 1, for progress), id, path and stat."""

    at: int
    n: int
    sid: str
    path: str
    st: os.stat_result


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
