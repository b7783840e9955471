"""Reading pi session files into Forkwise sessions, with their lineage.

One file gives its main line (root → the file's last entry, the path pi continues;
Forkwise id `pi-<session id>`) and one fork per other leaf of its tree. A branch's parent
is the session, among those already taken from the file, whose path shares the most
entries with it (the main line first); its id is derived from its first entry that parent
does not have. A header `parentSession` (`branchedFrom` in v1) names the file this one
was forked from: the main line's parent is that file's session sharing the most entries.
"""

from __future__ import annotations

import gc
import os
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from threading import Lock

from ...errors import ForkwiseError
from ...safe_read import read_head
from ..base import FormatError, ImportedSession, SourceRef, Tool, jsonl_files, source_session_id
from . import entries as pi_entries
from .convert import TURN_OPENERS, Mark, PathConverter
from .entries import Entry, PiFile

#: a file written to this recently may still be growing: its last turn is left open
LIVE_WINDOW_SECONDS = 300.0
_CACHE_SIZE = 64


def agent_dir(env: Mapping[str, str], home: Path) -> Path:
    """pi's agent folder: `$PI_CODING_AGENT_DIR` (a leading ~ expanded, as pi does) or
    `~/.pi/agent`."""
    value = env.get("PI_CODING_AGENT_DIR")
    if not value:
        return home / ".pi" / "agent"
    if value == "~":
        return home
    if value.startswith("~/"):
        return home / value[2:]
    return Path(value)


@dataclass(slots=True)
class Branch:
    """One session of a file's tree: its path and where it leaves its parent."""

    id: str
    path: list[Entry]
    parent: str | None  #: Forkwise id of the parent session (None: a root main line)
    shared: int = 0  #: how many entries of `path` the parent has too


@dataclass(slots=True)
class Lineage:
    """Which Forkwise session of a file first holds each entry (to find a fork's parent)."""

    main: str
    owner: dict[str, str]


def plan(file: PiFile) -> tuple[list[Branch], Lineage]:
    """The sessions of a file: the main line first, then the other leaves in file order.
    Each entry is visited once per session that first holds it, plus the copy of the
    shared prefix each branch needs anyway."""
    main_id = source_session_id("pi", file.session_id)
    if not file.entries:
        return [Branch(main_id, [], None)], Lineage(main_id, {})
    last = file.entries[-1]
    main_path = pi_entries.path_to(file, last)
    owner = {e.id: main_id for e in main_path}
    depth = {e.id: i for i, e in enumerate(main_path)}
    paths = {main_id: main_path}
    sessions = [Branch(main_id, main_path, None)]
    for leaf in pi_entries.leaves(file):
        if leaf.id in owner:
            continue
        fresh: list[Entry] = []
        current: Entry | None = leaf
        while current is not None and current.id not in owner:
            fresh.append(current)
            if len(fresh) > len(file.entries):
                raise FormatError("parentId cycle", path=str(file.path), line=current.line)
            parent = current.parent
            current = file.by_id.get(parent) if parent is not None else None
        fresh.reverse()
        if current is None:  # a second root (pi's resetLeaf): nothing shared
            parent_id, prefix = main_id, []
        else:
            parent_id = owner[current.id]
            prefix = paths[parent_id][: depth[current.id] + 1]
        branch_id = source_session_id("pi", file.session_id, fresh[0].id)
        path = prefix + fresh
        for i, entry in enumerate(fresh, start=len(prefix)):
            owner[entry.id] = branch_id
            depth[entry.id] = i
        paths[branch_id] = path
        sessions.append(Branch(branch_id, path, parent_id, len(prefix)))
    return sessions, Lineage(main_id, owner)


class PiReader:
    """Reads pi sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`).

    It remembers the lineage of the last files it read (by path, size and mtime), so a
    fork's parent file read just before is not read a second time."""

    tool: Tool = "pi"

    def __init__(self, live_window: float = LIVE_WINDOW_SECONDS) -> None:
        self.live_window = live_window
        self._lineage: dict[tuple[str, int, int], Lineage] = {}
        self._lock = Lock()

    def forked(self) -> None:
        """In a forked child: a lock of its own (see `READER`)."""
        self._lock = Lock()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        roots = [agent_dir(env, home) / "sessions"]
        extra = env.get("PI_CODING_AGENT_SESSION_DIR")
        if extra:
            roots.append(Path(extra))
        return roots

    def session_files(self, root: Path) -> Iterator[Path]:
        if root.is_file():
            yield root
            return
        yield from jsonl_files(root)

    def sniff(self, head: bytes) -> bool:
        return pi_entries.read_header(head) is not None

    def read(self, path: Path) -> list[ImportedSession]:
        return self._read_file(path, defer=False)

    def read_deferred(self, path: Path) -> list[ImportedSession]:
        """`read`, each branch converted when it is stored (`DefersBranches`)."""
        return self._read_file(path, defer=True)

    def _read_file(self, path: Path, *, defer: bool) -> list[ImportedSession]:
        try:
            stat = path.stat()
        except OSError as exc:
            raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
        with _collector_paused():
            return self._read(path, stat, defer)

    def _read(self, path: Path, stat: os.stat_result, defer: bool) -> list[ImportedSession]:
        file = pi_entries.load(path)
        branches, lineage = plan(file)
        self._remember(path, stat, lineage)
        live = file.torn_tail or time.time() - stat.st_mtime < self.live_window
        header = file.header
        # absolute, as pi names files in parentSession (an export names this path)
        source = SourceRef("pi", os.path.abspath(path), file.session_id, str(file.version))
        created = header["timestamp"]
        cwd = header.get("cwd")
        origin = self._origin(file)
        # pi's fork copies the whole tree: a leaf of the parent file is that file's branch
        skipped = {b.id for b in branches[1:] if origin.has(b.path[-1])}
        converted = _Converted(_converted(file, branches, created))
        out: list[ImportedSession] = []
        for branch in branches:
            if branch.id in skipped:
                continue
            is_main = branch is branches[0]
            parent = branch.parent
            if is_main or parent in skipped:
                parent = origin.parent_of(branch.path)
            born = created
            if not is_main and branch.path[branch.shared].ts is not None:
                born = branch.path[branch.shared].ts  # when it left its parent

            def made(branch: Branch = branch, parent: str | None = parent,
                     born: str = born, is_main: bool = is_main) -> ImportedSession:  # fmt: skip
                converter = converted.take(branch.id)
                events = converter.finish(live=live and is_main)
                title = converter.title
                if is_main:
                    title = _latest_name(file) or title
                return ImportedSession(
                    id=branch.id,
                    created=born,
                    cwd=cwd if isinstance(cwd, str) else "",
                    source=source,
                    events=events,
                    title=title,
                    parent=parent,
                    relation="fork" if parent is not None else None,
                    unmapped=converter.unmapped,
                )

            if defer and not is_main:
                out.append(ImportedSession(branch.id, born, "", source, [], parent=parent,
                                           relation="fork" if parent is not None else None,
                                           later=made))  # fmt: skip
            else:
                out.append(made())
        if out:
            out[0].warnings.extend(file.warnings)
        return out

    # -- lineage across files -------------------------------------------------------------

    def _remember(self, path: Path, stat: os.stat_result, lineage: Lineage) -> None:
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        with self._lock:
            self._lineage[key] = lineage
            while len(self._lineage) > _CACHE_SIZE:
                del self._lineage[next(iter(self._lineage))]

    def _lineage_of(self, path: Path) -> Lineage | None:
        try:
            stat = path.stat()
            key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        except OSError:
            return None
        with self._lock:
            known = self._lineage.get(key)
        if known is not None:
            return known
        try:
            _, lineage = plan(pi_entries.load(path))
        except ForkwiseError:  # unreadable, or refused by the safe reader (a FIFO there)
            return None
        self._remember(path, stat, lineage)
        return lineage

    def _in_pi_folders(self, parent: Path, child: Path) -> bool:
        """Whether a `parentSession` may be read. A header is the file's to write: it must
        not make the import open any path (/etc/shadow, /proc/self/environ). A session
        file (`*.jsonl`) inside pi's own folders or the folder of the file that names it
        is read; one elsewhere (an export with --out) only when its first line is a pi
        session header (its head alone is read to tell, through the safe reader)."""
        if parent.suffix != ".jsonl":
            return False
        real = Path(os.path.realpath(parent))
        roots = [child.parent, *self.default_roots(os.environ, Path.home())]
        if any(real.is_relative_to(os.path.realpath(r)) for r in roots):
            return True
        try:
            if not stat.S_ISREG(os.lstat(parent).st_mode):
                return False  # a link, FIFO or device out there is not even opened
            head = read_head(parent, 4096)
        except OSError:
            return False
        return pi_entries.read_header(head) is not None

    def _origin(self, file: PiFile) -> Origin:
        """The file this one was forked from (header `parentSession`), as far as known. A
        parent file that is gone is named by the session id in its file name."""
        named = file.parent_path
        if named is None:
            return Origin(None, None)
        parent_path = Path(named)
        if not parent_path.is_absolute():
            parent_path = file.path.parent / parent_path
        if parent_path == file.path or parent_path.resolve() == file.path.resolve():
            return Origin(None, None)
        readable = self._in_pi_folders(parent_path, file.path)
        lineage = self._lineage_of(parent_path) if readable else None
        if lineage is not None:
            return Origin(lineage.main, lineage)
        stem = parent_path.stem
        sid = stem.rsplit("_", 1)[-1] if "_" in stem else stem
        return Origin(source_session_id("pi", sid) if sid else None, None)


@dataclass(frozen=True, slots=True)
class Origin:
    """The parent file of a forked file: its main line's id and, if it could be read,
    which of its sessions holds each entry."""

    main: str | None
    lineage: Lineage | None

    def has(self, entry: Entry) -> bool:
        return self.lineage is not None and entry.id in self.lineage.owner

    def parent_of(self, path: list[Entry]) -> str | None:
        """The parent file's session holding the deepest entry of `path`, else its main."""
        if self.lineage is not None:
            for entry in reversed(path):
                owner = self.lineage.owner.get(entry.id)
                if owner is not None:
                    return owner
        return self.main


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading builds hundreds of thousands of small, acyclic containers; the cyclic
    collector would walk the whole decoded file again and again as it grows (a third of
    the reading time, measured). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Converted:
    """The converters `_converted` yields, taken by branch id as each branch is built:
    in their order (an import builds them so), the ones passed over kept until taken."""

    def __init__(self, running: Iterator[tuple[Branch, PathConverter]]) -> None:
        self._running = running
        self._ahead: dict[str, PathConverter] = {}

    def take(self, branch_id: str) -> PathConverter:
        found = self._ahead.pop(branch_id, None)
        while found is None:
            branch, converter = next(self._running)
            if branch.id == branch_id:
                return converter
            self._ahead[branch.id] = converter
        return found


def _restart(branch: Branch) -> int:
    """Where a branch's conversion starts over from its parent's state: its last
    turn-opening entry before it leaves the parent (0: from the start)."""
    for index in range(branch.shared - 1, 0, -1):
        entry = branch.path[index]
        if entry.type == "message" and entry.data["message"]["role"] in TURN_OPENERS:
            return index
    return 0


def _converted(
    file: PiFile, branches: list[Branch], created: str
) -> Iterator[tuple[Branch, PathConverter]]:
    """Each session fed to its converter (not finished), the shared part of a branch taken
    from a mark of its parent's converter (its state where the branch starts over)."""
    starts = {b.id: _restart(b) for b in branches[1:]}
    wanted: dict[str, set[int]] = {}
    for b in branches[1:]:
        assert b.parent is not None
        wanted.setdefault(b.parent, set()).add(starts[b.id])
    saved: dict[tuple[str, int], Mark] = {}
    for branch in branches:
        start = starts.get(branch.id, 0)
        if branch.parent is None:
            converter = PathConverter(file.session_id, created)
        else:
            converter = saved[(branch.parent, start)].resume()
        position = start
        for point in sorted(wanted.get(branch.id, ())):
            converter.feed(branch.path, position, point)
            saved[(branch.id, point)] = converter.mark()
            position = point
        converter.feed(branch.path, position)
        yield branch, converter


def _latest_name(file: PiFile) -> str | None:
    """pi's name for a file: the latest `session_info` name anywhere in it."""
    for entry in reversed(file.entries):
        name = entry.data.get("name") if entry.type == "session_info" else None
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


READER = PiReader()
# an import reads files in forked worker processes (`host/import_ahead.py`): a worker
# starts with the reader's lock free, whichever thread of the host held it at the fork
os.register_at_fork(after_in_child=READER.forked)
