"""An import's files read, mapped, laid out and checked in worker processes while the
importing process stores them.

Storing a session costs its write; reading it costs far more (decoding the tool's lines,
mapping them to events, checking and encoding those: two thirds of the CPU of a Claude Code
or Codex import, measured). Each file is read on its own, so that work splits by file:
`ReadAhead` hands runs of the files to forked processes (`parallel_fold.fold_all`, the
pool the unindexed listing uses; the importing process takes runs too) and takes back, in
the files' order, what each made of its file (`Prepared`), while the importing process
goes on storing. The encoded lines come back as bytes: the importing process writes them
without decoding or checking them again (`SessionStore.import_checked`).

A worker does only what the store's state cannot change. It reads the file and lays out
its sessions as the importing process would if none of them were stored yet — a branch
of a session of the same file as a fork of it, exactly as `store_sessions` does. When a
session of the file branches from one in another file, it hands back the sessions as
read instead (`Prepared.checked` None), for the importing process to lay out against the
store. The importing process uses what was checked only when its own view agrees: the
file's size and modification time are the ones the worker read, no session of it is
stored yet, and no session is a Continue in of a stored one (`_continued`); otherwise it
reads the file itself. Whatever a worker cannot read, for any reason, is read by the
importing process, which then reports the failure as before: the result of an import
does not depend on how many processes made it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from forkwise.core.formats.base import ImportedSession, Record
from forkwise.core.host.import_layout import layout, parents_first
from forkwise.core.host.import_ledger import source_stamp
from forkwise.core.log.event_log import EventLog
from forkwise.core.log.turns import BracketState
from forkwise.core.store.backend import LoadedLog
from forkwise.core.store.backends.parallel_fold import fold_all, processes_for
from forkwise.core.store.checked_log import check_records
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import SessionHeader, SessionSummary

ReadFile = Callable[[Path, str], list[ImportedSession]]
#: bytes of source files per pool of workers: at most what the workers read and encode
#: ahead of the store, held in memory until it is stored
WINDOW_BYTES = 256 << 20


@dataclass(slots=True)
class Checked:
    """`check_records`'s result for one session, as it travels between processes (a
    header's meta is a read-only mapping, which does not pickle)."""

    header: tuple[str, str, str, str | None, int, dict[str, Any], int]
    lines: list[bytes]
    types: list[str]
    state: BracketState
    summary: SessionSummary | None
    point: ForkPoint | None

    @classmethod
    def of(cls, log: LoadedLog) -> Checked:
        h = log.header
        events = log.events
        assert isinstance(events, EventLog)  # check_records keeps lines
        n = len(events)
        fields = (h.id, h.created, h.cwd, h.parent_session, h.seed_length, dict(h.meta), h.version)
        return cls(fields, events.lines(n), list(events.types_of(n)), log.state, log.summary,
                   log.point)  # fmt: skip

    def loaded(self) -> LoadedLog:
        sid, created, cwd, parent, seed, meta, version = self.header
        header = SessionHeader(sid, created, cwd, parent, seed, MappingProxyType(meta), version)
        intern = sys.intern
        events = EventLog.lazy(self.lines, [intern(t) for t in self.types])
        return LoadedLog(header, events, self.state, summary=self.summary, point=self.point)


@dataclass(slots=True)
class Prepared:
    """What a worker made of one file: its sessions, and each one's checked log when the
    file could be laid out on its own (then the sessions are kept without their events)."""

    #: the format it was read in
    tool: str
    #: the file's size and modification time when the worker read it (`source_stamp`)
    stamp: tuple[int, int]
    sessions: list[ImportedSession]
    checked: dict[str, Checked] | None = None


@dataclass(slots=True)
class _Laid:
    """The sessions of one file laid out so far, as `layout` looks its parents up."""

    logs: dict[str, LoadedLog] = field(default_factory=dict)

    def exists(self, session_id: str) -> bool:
        return session_id in self.logs

    def get(self, session_id: str) -> LoadedLog:
        return self.logs[session_id]


def prepare(path: Path, tool: str, read: ReadFile) -> Prepared | None:
    """A file read and, when its sessions need nothing stored, laid out and checked; None
    when it cannot be (the importing process reads it and says why)."""
    try:
        st = source_stamp(path)
        sessions = read(path, tool)
        if not sessions:
            return None
        if len(sessions) > 1:
            # a file with branches is read where it is stored: each branch is built only
            # when it is stored and its start stored by reference to its parent's
            # (`DefersBranches`, `SessionStore.import_records`), which a worker's checked
            # copies would undo (a file rewound 1,500 times)
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        own = {s.id for s in sessions}
        if len(own) < len(sessions) or any(
            s.parent is not None and s.parent not in own for s in sessions
        ):  # a branch of a session stored before: laid out against the store
            return Prepared(tool, stamp, sessions)
        return Prepared(tool, stamp, [_shell(s) for s in sessions], _checked(sessions))
    except Exception:  # read again where it is reported
        return None


def _checked(sessions: list[ImportedSession]) -> dict[str, Checked]:
    """Each session laid out as `store_sessions` lays it out into a store holding none
    of them, and checked as `SessionStore.import_records` checks it."""
    full: dict[str, list[Record]] = {s.id: s.events for s in sessions}
    laid = _Laid()
    out: dict[str, Checked] = {}
    for s in parents_first(sessions):
        parent_full = full.get(s.parent) if s.parent is not None else None
        if s.relation == "continued":
            parent_full = []
        header, records = layout(laid, s, parent_full)
        log = check_records(header, records)
        laid.logs[s.id] = log
        out[s.id] = Checked.of(log)
    return out


def _shell(s: ImportedSession) -> ImportedSession:
    """The session without its events (the checked lines stand for them)."""
    return ImportedSession(
        s.id, s.created, s.cwd, s.source, [], s.title, s.parent, s.relation, s.unmapped,
        s.seq_first, s.warnings,
    )  # fmt: skip


def lineage(sessions: Sequence[ImportedSession]) -> list[tuple[Any, ...]]:
    """What the importing process may change of read sessions before they are laid out
    (`_continued`): a checked file whose lineage changed is read again."""
    return [(s.parent, s.relation, s.created, s.title) for s in sessions]


class ReadAhead:
    """The files of an import that workers read ahead (`wanted`), and what each made of
    them, taken in the files' order (`take`)."""

    def __init__(
        self,
        files: Sequence[tuple[Path, str | None]],
        wanted: Callable[[Path, str | None], str | None],
        read: ReadFile,
    ) -> None:
        self._files = files
        self._wanted = wanted  # the tool a file is read with, or None: not read ahead
        self._read = read
        self._next = 0  # the first file no window holds yet
        self._jobs: list[tuple[int, Path, str]] = []  # of the current window
        self._results: Iterator[Prepared | None] = iter(())
        self._at = 0  # the next job of the window whose result is not taken

    def take(self, k: int) -> Prepared | None:
        """What a worker made of file `k`, or None (not read ahead, or not readable
        there); called with `k` increasing, for the files the import reads (the first
        one starts the workers on it and on those after it)."""
        while True:
            if self._at < len(self._jobs):
                job = self._jobs[self._at][0]
                if job > k:
                    return None  # file k is not read ahead
                got = next(self._results, None)
                self._at += 1
                if job == k:
                    return got
                continue  # a file the caller did not ask for
            if k < self._next or k >= len(self._files):
                return None
            self._next = k
            self._window()

    def _window(self) -> None:
        """The next files, up to `WINDOW_BYTES` of them, handed to the workers."""
        self.close()
        jobs: list[tuple[int, Path, str]] = []
        sizes: list[int] = []
        held = 0
        while self._next < len(self._files) and held < WINDOW_BYTES:
            k = self._next
            path, tool = self._files[k]
            self._next += 1
            found = self._wanted(path, tool)
            if found is None:
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            jobs.append((k, path, found))
            sizes.append(size)
            held += size
        self._jobs, self._at = jobs, 0
        read = self._read
        self._results = fold_all(
            len(jobs),
            lambda i: prepare(jobs[i][1], jobs[i][2], read),
            sizes,
            processes_for(held),
        )

    def close(self) -> None:
        """Stop the workers of the current window (an import that ends early)."""
        results, self._results = self._results, iter(())
        close = getattr(results, "close", None)
        if close is not None:
            close()
        self._jobs, self._at = [], 0
