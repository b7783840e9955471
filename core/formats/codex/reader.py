"""Reads Codex rollouts (`$CODEX_HOME` or `~/.codex`) into Forkwise sessions, with lineage.

Identity is the file's FIRST `session_meta` (`id`); a file without one fails with the code
`codex-no-session-meta` rather than getting an invented id. Lineage:

- `forked_from_id` -> a fork of `codex-<that id>`. A legacy fork file repeats its parent's
  lines (the parent's own `session_meta` included) stamped with the fork's time; they are
  read with the parent's timestamps when the parent's file is in the same Codex home, so the
  shared events are equal to the parent's. A paginated fork (`forked_from_ordinal_exclusive`)
  copies nothing: its history starts with the parent's lines below that ordinal, read from
  the parent's file (their `src` names the parent).
- `source.subagent.thread_spawn.parent_thread_id` (or the top-level `parent_thread_id`) ->
  a subagent of that thread; this wins over `forked_from_id` (a spawned thread may start
  from a copy of its parent's history, read as for a fork).
- `thread_rolled_back` -> the main line is what remains; each rolled-back tail is a fork
  branch `codex-<id>-rb<line>` (see mapping.py).
- A paginated segment (`history_base`) continues the history of an earlier file of the same
  thread below `end_ordinal_exclusive`; its `src` id is `<thread>_<segment>` so that the
  base file's lines (src id `<thread>`) stay distinct.
Titles come from the home's `session_index.jsonl`, else the first prompt. A rolled-back or
reverted branch has its thread's title, as a rewind's or a branch's of the other tools (the
app names a fork that carries its source's title "<title> — fork N"), and is created when
it left the thread (its first event past what it shares), so that its number follows the
order the branches were left in.
"""

from __future__ import annotations

import copy
import gc
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import Any

from ..base import (
    UNREADABLE,
    FormatError,
    ImportedSession,
    ReadWarning,
    Record,
    SourceRef,
    Tool,
    source_session_id,
)
from .lines import (
    ARCHIVED,
    END,
    NO,
    ORDINAL,
    PAYLOAD,
    SESSION_INDEX,
    SESSIONS,
    START,
    TS,
    TYPE,
    Line,
    RolloutName,
    codex_home,
    head_text,
    iter_lines,
    parse_lines,
    parse_name,
    read_text_stat,
    rollout_files,
    thread_names,
)
from .mapping import PROVIDER, Mapper

TOOL: Tool = "codex"
_MAX_DEPTH = 32
#: the bytes of recently read files kept for the forks read after them (at least the last
#: file): 64 MB of them kept the pages of a 60 MB import from being used again (RSS 155 MB
#: against 70 MB, a sixth more system time, measured)
_CACHE_BYTES = 8 << 20
_AFTER_TS = len('{"timestamp":"2025-09-01T10:00:00.000Z"')


class NoSessionMeta(FormatError):
    """A rollout without a `session_meta` line has no thread id of its own."""

    code = "codex-no-session-meta"


class _File:
    """A rollout: its bytes, identity and the source id its lines are cited by. Only the
    lines up to the `session_meta` are decoded here; the rest are decoded as they are mapped
    (`take_body`, once) or all together when another file builds on them (`lines`), so that
    a file's decoded lines are not kept while it is mapped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data, st = read_text_stat(path)
        self.data = data
        self.size = len(data)
        #: the file's size and mtime as it was read (what the reader's cache is checked by)
        self.key = (st.st_size, st.st_mtime_ns)
        self.mtime = st.st_mtime
        self._lines: tuple[list[Line], bool] | None = None
        #: the lines that are not JSON (each once: the file may be decoded twice)
        self.warnings: list[ReadWarning] = []
        torn: list[bool] = []
        stream = iter_lines(data, path, torn, self.warnings)
        head: list[Line] = []
        meta_line: Line | None = None
        for ln in stream:  # the meta line is the first of a rollout: this decodes one line
            if ln[TYPE] == "session_meta":
                meta_line = ln
                break
            if ln[TYPE] == UNREADABLE:
                # the thread's own meta may be this line: a later one may be the parent's
                # (a fork repeats it), whose identity must not be taken
                raise NoSessionMeta(
                    f"{path.name}: line {ln[NO]}, before any session_meta, is not JSON: "
                    "the thread's identity cannot be read",
                    path=str(path),
                    line=ln[NO],
                )
            head.append(ln)
        if meta_line is None:
            raise NoSessionMeta(
                f"{path.name} has no session_meta line: no thread id to import it under",
                path=str(path),
                line=1,
            )
        meta = meta_line[PAYLOAD]
        tid = meta.get("id") or meta.get("session_id") if isinstance(meta, dict) else None
        if not isinstance(tid, str) or not tid:
            raise FormatError("session_meta has no string id", path=str(path), line=meta_line[NO])
        self.meta_line = meta_line
        self.meta: dict[str, Any] = meta
        #: the conversation's lines, decoded as they are read: the lines before the meta
        #: line, then the rest of the file (`torn` gets True when it ends mid-line)
        self._body: tuple[Iterator[Line], list[bool]] | None = (chain(head, stream), torn)
        self.thread_id = tid.lower()
        name = parse_name(path.name)
        self.segment = name.segment if name and name.thread_id == self.thread_id else None
        self.src_id = f"{self.thread_id}_{self.segment}" if self.segment else self.thread_id
        self.created_key = (self.segment or self.thread_id).lower()

    def take_body(self) -> tuple[Iterator[Line], list[bool]] | None:
        """The conversation's lines as they are decoded, and the list that gets True when
        the file ends mid-line; once (None after: read `body`, decoded again)."""
        body, self._body = self._body, None
        return body

    @property
    def lines(self) -> list[Line]:
        """Every line, decoded from the file's bytes the first time it is asked for (kept
        while the file is: the forks read after their parent use them again)."""
        return self._parsed()[0]

    @property
    def partial(self) -> bool:
        """Whether the file ends in the middle of a line (Codex is writing it)."""
        return self._parsed()[1]

    @property
    def body(self) -> list[Line]:
        """Every line but the `session_meta` one, decoded."""
        meta = self.meta_line[NO]
        return [ln for ln in self.lines if ln[NO] != meta]

    def _parsed(self) -> tuple[list[Line], bool]:
        parsed = self._lines
        if parsed is None:
            warned = {w.line for w in self.warnings}
            found: list[ReadWarning] = []
            parsed = self._lines = parse_lines(self.data, self.path, found)
            self.warnings += [w for w in found if w.line not in warned]
        return parsed

    def raw(self, line: Line) -> bytes:
        """The bytes of one of its lines."""
        return self.data[line[START] : line[END]]


class CodexReader:
    """The Reader of base.py for Codex."""

    tool: Tool = TOOL

    def __init__(self) -> None:
        #: seconds since the last write within which an unfinished turn counts as running
        self.live_seconds = 120.0
        self._homes: dict[Path, dict[str, list[Path]]] = {}
        #: recently parsed files, so that a fork read after its parent (name order is
        #: creation order) does not parse the parent again; bounded by their size
        self._parsed: OrderedDict[Path, tuple[tuple[int, int], _File]] = OrderedDict()
        self._parsed_bytes = 0  # their sizes added up, kept as they come and go
        self._lock = threading.Lock()  # one READER serves the host's threads
        self._index_names: dict[Path, tuple[tuple[int, int], dict[str, str]]] = {}

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return [base / SESSIONS, base / ARCHIVED]

    def session_files(self, root: Path) -> Iterator[Path]:
        """Rollouts under `root`; of a thread continued in segment files, only the newest."""
        if root.is_file():
            yield root
            return
        if not root.is_dir():
            return
        newest: dict[str, Path] = {}
        order: list[str] = []
        for path in rollout_files(root, special=True):
            name = parse_name(path.name)
            key = name.thread_id if name else str(path)
            if key not in newest:
                order.append(key)
            newest[key] = path
        for key in order:
            yield newest[key]

    def sniff(self, head: bytes) -> bool:
        text = head_text(head).lstrip()
        first = text.split(b"\n", 1)[0]
        if first.startswith(b'{"timestamp":') and b'"payload":' in first:
            return True
        # the layout before the envelope: a bare session meta line
        return first.startswith(b'{"id":') and b'"timestamp":' in first and b'"type"' not in first

    # -- reading --------------------------------------------------------------------------

    def read(self, path: Path) -> list[ImportedSession]:
        # the mapping makes many small containers and frees none of them before the end:
        # the cycle collector would walk them again and again (a third of the time)
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._read(path)
        finally:
            if collecting:
                gc.enable()

    def forked(self) -> None:
        """In a forked child: a lock of its own (see `READER`)."""
        self._lock = threading.Lock()

    def release(self) -> None:
        """Drop the parsed files kept for the forks of one import (called when it is over):
        kept, they would hold hundreds of thousands of objects for the collector to walk."""
        with self._lock:
            self._parsed.clear()
            self._parsed_bytes = 0

    def _load(self, path: Path) -> _File:
        """The file, parsed again unless it is kept and its size and mtime did not change
        (a file not kept is read at once: its stat is taken as it is read)."""
        with self._lock:
            cached = self._parsed.get(path)
        if cached is not None:
            try:
                st = path.stat()
            except OSError:
                st = None
            if st is not None and cached[0] == (st.st_size, st.st_mtime_ns):
                with self._lock:
                    if self._parsed.get(path) is cached:  # not dropped by another thread
                        self._parsed.move_to_end(path)
                return cached[1]
        file = _File(path)  # raises the FormatError that says why it cannot be read
        with self._lock:
            replaced = self._parsed.pop(path, None)
            if replaced is not None:
                self._parsed_bytes -= replaced[1].size
            self._parsed[path] = (file.key, file)
            self._parsed_bytes += file.size
            while self._parsed_bytes > _CACHE_BYTES and len(self._parsed) > 1:
                _, (_, old) = self._parsed.popitem(last=False)
                self._parsed_bytes -= old.size
        return file

    def _read(self, path: Path) -> list[ImportedSession]:
        own = self._load(path)
        meta = own.meta
        provider = meta.get("model_provider")
        mapper = Mapper(provider if isinstance(provider, str) and provider else PROVIDER)
        home = codex_home(path)
        parent_tid, relation = _lineage(meta)
        reverted = self._prefix(own, mapper, home, 0)
        copied = isinstance(meta.get("forked_from_id"), str)
        ts = self._parent_times(own, home) if copied else None
        with self._lock:  # the file may be in the cache, read by another thread
            streamed = None if copied else own.take_body()
        if streamed is None:
            mapper.feed(own.body, own.src_id, ts)
            partial = own.partial
        else:
            mapper.feed(streamed[0], own.src_id)
            partial = bool(streamed[1])
        # whether Codex is still writing the file matters only to a turn it left open
        mapper.finish(live=partial or (mapper.turn_open and self._recent(path)))

        sid = source_session_id(TOOL, own.thread_id)
        title = self._names(home).get(own.thread_id) or _short(mapper.first_prompt)
        version = meta.get("cli_version")
        ref = SourceRef(TOOL, str(path), own.src_id, version if isinstance(version, str) else None)
        created = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
        created = created or own.meta_line[TS]
        cwd = str(meta.get("cwd") or mapper.context_cwd or "")
        main = ImportedSession(
            id=sid,
            created=created,
            cwd=cwd,
            source=ref,
            events=mapper.events,
            title=title,
            parent=source_session_id(TOOL, parent_tid) if parent_tid else None,
            relation=relation,
            unmapped=dict(mapper.unmapped),
            seq_first=True,
            warnings=list(own.warnings),
        )
        out = [main]
        for line_no, events, cut in mapper.branches:
            out.append(
                ImportedSession(
                    id=source_session_id(TOOL, own.thread_id, f"rb{line_no}"),
                    created=_left_at(events, cut, created),
                    cwd=cwd,
                    source=ref,
                    events=events,
                    title=title,
                    parent=sid,
                    relation="fork",
                    unmapped=_unmapped(events),
                    seq_first=True,
                )
            )
        for key, events, source_ref, cut in reverted:
            out.append(
                ImportedSession(
                    id=source_session_id(TOOL, own.thread_id, key),
                    created=_left_at(events, cut, created),
                    cwd=cwd,
                    source=source_ref,
                    events=events,
                    title=title,
                    parent=sid,
                    relation="fork",
                    unmapped=_unmapped(events),
                    seq_first=True,
                )
            )
        return out

    def _names(self, home: Path | None) -> dict[str, str]:
        """The home's thread names, read again only when `session_index.jsonl` changed."""
        if home is None:
            return {}
        try:
            st = (home / SESSION_INDEX).stat()
        except OSError:
            return {}
        key = (st.st_size, st.st_mtime_ns)
        cached = self._index_names.get(home)
        if cached is None or cached[0] != key:
            cached = (key, thread_names(home))
            self._index_names[home] = cached
        return cached[1]

    def _recent(self, path: Path) -> bool:
        try:
            return time.time() - path.stat().st_mtime < self.live_seconds
        except OSError:
            return False

    def _prefix(
        self, file: _File, mapper: Mapper, home: Path | None, depth: int
    ) -> list[tuple[str, list[Record], SourceRef, int]]:
        """Feed the history a paginated file builds on (a fork's parent below the fork's
        ordinal, or an earlier file of the same thread), oldest first. Returns the branches
        a revert left behind: an earlier file's lines at and after the segment's base
        ordinal, mapped on top of the history below it (`rb<ordinal>`), with where they
        leave that history."""
        meta = file.meta
        base = meta.get("history_base")
        if isinstance(base, dict) and isinstance(base.get("thread_id"), str):
            tid, end = base["thread_id"].lower(), base.get("end_ordinal_exclusive")
        elif isinstance(meta.get("forked_from_id"), str) and isinstance(
            meta.get("forked_from_ordinal_exclusive"), int
        ):
            tid, end = meta["forked_from_id"].lower(), meta["forked_from_ordinal_exclusive"]
        else:
            return []
        if depth >= _MAX_DEPTH or home is None:
            return []
        source_path = self._find(home, tid, file.created_key)
        if source_path is None:
            return []
        source = self._load(source_path)
        branches = self._prefix(source, mapper, home, depth + 1)
        limit = end if isinstance(end, int) else None
        lines = source.lines
        below = list(_below(lines, limit))
        mapper.feed(below, source.src_id)
        tail = lines[len(below) :]
        if isinstance(base, dict) and limit is not None and tail:
            undone = copy.deepcopy(mapper)
            shared = len(undone.events)
            undone.feed(tail, source.src_id)
            undone.finish(live=False)
            version = source.meta.get("cli_version")
            ref = SourceRef(
                TOOL, str(source.path), source.src_id, version if isinstance(version, str) else None
            )
            branches.append((f"rb{limit}", undone.events, ref, shared))
        return branches

    def _parent_times(self, own: _File, home: Path | None, depth: int = 0) -> dict[int, str]:
        """The time each line's event carries: a legacy fork's copy of its parent's lines
        takes the parent's times (themselves taken from the grandparent for a fork of a
        fork), so that the shared events are equal."""
        times = {ln[NO]: ln[TS] for ln in own.lines}
        parent_tid = own.meta.get("forked_from_id")
        if home is None or not isinstance(parent_tid, str) or depth >= _MAX_DEPTH:
            return times
        parent_path = self._find(home, parent_tid.lower(), own.created_key)
        if parent_path is None:
            return times
        try:
            parent = self._load(parent_path)
        except FormatError:
            return times
        theirs_times = self._parent_times(parent, home, depth + 1)
        after = [ln for ln in own.lines if ln[NO] > own.meta_line[NO]]
        for mine, theirs in zip(after, parent.lines, strict=False):
            # Codex writes the time first: equal bytes after it are the same line
            if own.raw(mine)[_AFTER_TS:] != parent.raw(theirs)[_AFTER_TS:] and (
                mine[TYPE] != theirs[TYPE] or mine[PAYLOAD] != theirs[PAYLOAD]
            ):
                break
            times[mine[NO]] = theirs_times[theirs[NO]]
        return times

    def _find(self, home: Path, tid: str, before: str) -> Path | None:
        """The newest rollout of thread `tid` in `home` created before the file whose
        creation key is `before` (thread and segment ids are UUIDv7: they sort by time).
        The index of the home is built once and refreshed on a miss."""
        for attempt in range(2):
            index = self._homes.get(home)
            if index is None or attempt:
                index = {}
                for folder in (home / SESSIONS, home / ARCHIVED):
                    if folder.is_dir():
                        for p in rollout_files(folder):
                            name = parse_name(p.name)
                            if name:
                                index.setdefault(name.thread_id, []).append(p)
                self._homes[home] = index
            found = [
                (_created_key(name), p)
                for p in index.get(tid, [])
                if (name := parse_name(p.name)) and _created_key(name) < before and p.exists()
            ]
            if found:
                return max(found)[1]
        return None


def _unmapped(events: list[Record]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in events:
        kind = event["type"]
        if kind.startswith("plugin/codex/"):
            counts[kind[13:]] = counts.get(kind[13:], 0) + 1
    return counts


def _left_at(events: list[Record], cut: int, created: str) -> str:
    """When a branch left the line it shares `events[:cut]` with: its first event's time
    past them (`created`, the thread's, when it has none)."""
    ts = events[cut].get("ts") if cut < len(events) else None
    return ts if isinstance(ts, str) and ts else created


def _created_key(name: RolloutName) -> str:
    return (name.segment or name.thread_id).lower()


def _below(lines: list[Line], end: int | None) -> Iterator[Line]:
    for ln in lines:
        ordinal = ln[ORDINAL]
        if end is not None and ordinal is not None and ordinal >= end:
            break
        yield ln


def _lineage(meta: dict[str, Any]) -> tuple[str | None, Any]:
    """The thread this one comes from and how: a thread a parent spawned is its subagent
    (even when it starts from a copy of the parent's history), else a `forked_from_id` is
    a fork."""
    source = meta.get("source")
    spawn = None
    if isinstance(source, dict):
        sub = source.get("subagent")
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    parent = parent or meta.get("parent_thread_id")
    if isinstance(parent, str) and parent:
        return parent.lower(), "subagent"
    forked = meta.get("forked_from_id")
    if isinstance(forked, str) and forked:
        return forked.lower(), "fork"
    return None, None


def _short(text: str | None) -> str | None:
    if not text:
        return None
    first = " ".join(text.split())
    return first if len(first) <= 80 else first[:79] + "…"


READER = CodexReader()
# an import reads files in forked worker processes (`host/import_ahead.py`): a worker
# starts with the reader's lock free, whichever thread of the host held it at the fork
os.register_at_fork(after_in_child=READER.forked)
