"""What every foreign session format (Claude Code, Codex, pi) provides to Forkwise.

A format module reads a tool's session files into `ImportedSession`s and writes a Forkwise
session back as a native session of that tool. It knows nothing of the store: the import
verb (one implementation, used by the CLI, the host's RPC and the app's watcher) turns the
readers' output into stored sessions, computes where a child's history leaves its parent's,
and brings an earlier import up to date by appending.

Rules a reader follows, so that every format behaves alike:

- `events` is the whole conversation of that session as the tool shows it, root first, as
  Forkwise event records *without* `seq`: `{"type": …, "ts": …, …fields}` — or, with
  `seq_first`, each record's keys in a log line's order with a placeholder `seq` first
  (`{"seq": 0, "type": …, "ts": …, …fields}`), which the import numbers in place instead
  of copying every record to put `seq` first. Messages sit
  inside `turn/start` … `turn/end` brackets; message ids are `role:slug:suffix`, unique in
  the list and deterministic (derived from the source's own ids or positions, never random),
  so that two sessions read from one tree carry equal records for the entries they share.
- Every event made from source lines carries `"src": {"id": SOURCE_SESSION_ID, "lines": [N, …]}`
  (1-based line numbers in the file of the source session `id`). A writer copies those lines
  back unchanged when it exports a session that shares them. Events the reader invents (a
  `turn/end` the source never wrote) carry no `src`.
- What has no Forkwise equivalent (images, usage, encrypted reasoning, unknown line types)
  becomes a `plugin/<tool>/<kind>` event — nothing is dropped silently.
- Lineage: `parent` names the Forkwise id of the session this one branched from (a rewind,
  a fork, a subagent), `relation` says which. The import verb finds the shared prefix by
  comparing `events` with the parent's (ignoring `src`), cuts it back to the last `turn/end`
  they share, and stores the child as a fork of the parent there.
- A file that cannot be read raises `FormatError` with the 1-based line number; nothing of
  that file is imported. A file that yields no session at all (no identity, nothing
  readable) raises too: it is reported failed, never silently absent.
- Warnings: a line of the tool's file that is not JSON (torn, cut, garbage) does not lose
  the session. The reader keeps it verbatim where it stands as an `unreadable_event`
  (`plugin/<tool>/unreadable`, `{"text": the line, "src": …}`), reads on, and adds an
  `unreadable_warning` to the `warnings` of the first session it returns (the file's
  warnings, once per file). The import verb reports them under `"warnings": [{"path",
  "line", "code", "message"}]` whenever it reads the file — a new or changed file, never
  an unchanged one (the ledger skips it), so a front end shows them once per change of
  the file. A last line without its newline is one the tool is still writing: it is
  left for the next read, no event and no warning. Forkwise's own logs stay strict.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from forkwise.core.errors import (
    ForkwiseError,
    LinkOutOfFolder,
    NotRegularSource,
    SourceTooLarge,
    StorageError,
    TargetExists,
)
from forkwise.core.log.ids import slugify
from forkwise.core.safe_read import (
    INSIDE,
    FileTooLarge,
    LinkOutside,
    NotRegularFile,
    read_regular,
)

Tool = Literal["claude", "codex", "pi", "gemini", "opencode"]
#: "continued": a file Forkwise exported, read back beneath the session it continues
Relation = Literal["fork", "subagent", "continued"]
Record = dict[str, Any]


class FormatError(ForkwiseError):
    """A source file that is not a readable session of the tool it claims to be."""

    code = "import-failed"

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        super().__init__(message, path=path, line=line)
        self.path = path
        self.line = line


class HoldsNothing(Exception):
    """A file its tool writes with no conversation in it by design (Gemini CLI leaves one
    with nothing but its own context when a resume starts in a later minute): read, and
    nothing to import; not a failure, unlike a file that should hold a session and does
    not (`FormatError`)."""


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where an imported session came from; kept as `meta.source` in its header."""

    tool: str
    path: str
    id: str
    version: str | None = None

    def to_meta(self) -> dict[str, Any]:
        return {"tool": self.tool, "path": self.path, "id": self.id, "version": self.version}

    @classmethod
    def from_meta(cls, meta: object) -> SourceRef | None:
        if not isinstance(meta, Mapping):
            return None
        tool, path, sid = meta.get("tool"), meta.get("path"), meta.get("id")
        if not (isinstance(tool, str) and isinstance(path, str) and isinstance(sid, str)):
            return None
        version = meta.get("version")
        return cls(tool, path, sid, version if isinstance(version, str) else None)


@dataclass(frozen=True, slots=True)
class ReadWarning:
    """Something of a source file a reader could not read, while the session imported."""

    path: str
    line: int | None
    code: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code, "message": self.message}


#: the warning code (and the plugin kind) of a line that is not JSON
UNREADABLE = "unreadable"
UNREADABLE_CODE = "unreadable-line"


def unreadable_text(raw: bytes | memoryview) -> str:
    """A line that is not JSON, as the text an event keeps (bytes that are not UTF-8 are
    replaced: the event's `src` still names the line, so an export copies its bytes)."""
    return bytes(raw).decode("utf-8", "replace")


def unreadable_event(tool: str, text: str, ts: str, src_id: str, line: int) -> Record:
    """The `plugin/<tool>/unreadable` event that keeps a line that is not JSON."""
    return {
        "type": f"plugin/{tool}/{UNREADABLE}",
        "ts": ts,
        "text": text,
        "src": {"id": src_id, "lines": [line]},
    }


def unreadable_warning(path: Path | str, line: int, why: str = "") -> ReadWarning:
    """The warning for a line that is not JSON, kept as a plugin event."""
    detail = f" ({why})" if why else ""
    return ReadWarning(
        str(path),
        line,
        UNREADABLE_CODE,
        f"line {line} is not JSON{detail}: kept as it is, the rest of the session imported",
    )


@dataclass(slots=True)
class ImportedSession:
    """One session as read from a tool's files, before it is stored."""

    id: str
    created: str
    cwd: str
    source: SourceRef
    events: list[Record]
    title: str | None = None
    parent: str | None = None
    relation: Relation | None = None
    #: plugin/<tool>/<kind> events made, by kind (what could not be mapped)
    unmapped: dict[str, int] = field(default_factory=dict)
    #: every record of `events` starts with `seq` (a placeholder), `type` and `ts`, in a
    #: log line's order: the import numbers them in place (the records are its own then)
    seq_first: bool = False
    #: what of the file could not be read (its lines kept as plugin events): the file's
    #: warnings, on the first session read from it
    warnings: list[ReadWarning] = field(default_factory=list)
    #: a branch whose reader builds it only when it is stored (`DefersBranches`): its
    #: events, title, created, cwd and unmapped come from this (`built`)
    later: Callable[[], ImportedSession] | None = None

    def built(self) -> ImportedSession:
        """This session with its events (built now, when its reader deferred them)."""
        if self.later is not None:
            made, self.later = self.later(), None
            self.events, self.title, self.created = made.events, made.title, made.created
            self.cwd, self.unmapped, self.seq_first = made.cwd, made.unmapped, made.seq_first
            self.source = made.source
        return self


@dataclass(frozen=True, slots=True)
class ExportedSession:
    """What a writer wrote: the file, the tool's new session id, the command that resumes it."""

    path: Path
    id: str
    resume: str


@dataclass(frozen=True, slots=True)
class ExportInput:
    """A Forkwise session handed to a writer.

    `events` are its stored records in seq order (`seq`, `type`, `ts`, fields). Events that
    carry `src` are the source's own lines: `sources` maps each source session id named by
    a `src` to where that source lives (from the headers of the session and its ancestors).
    """

    session_id: str
    cwd: str
    title: str | None
    created: str
    events: Sequence[Mapping[str, Any]]
    sources: Mapping[str, SourceRef]
    model: Mapping[str, Any] | None = None


class Reader(Protocol):
    """Reads one tool's session files."""

    tool: Tool

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Folders where the tool keeps its sessions on this machine (may not exist)."""
        ...

    def session_files(self, root: Path) -> Iterator[Path]:
        """The session files under `root` (a folder), or `root` itself if it is a file."""
        ...

    def sniff(self, head: bytes) -> bool:
        """Whether a file starting with `head` (its first few KiB) is this tool's format."""
        ...

    def read(self, path: Path) -> list[ImportedSession]:
        """Every Forkwise session the file holds: its main line first, then branches and
        subagents. Raises FormatError naming the line."""
        ...


@runtime_checkable
class DefersBranches(Protocol):
    """A reader that can leave the branches of a file unbuilt until each is stored: a
    file rewound at every turn has as many branches as turns, each as long as the turns
    it shares, and all of them built at once held the file's turns squared (1,500 rewinds
    of a 3 MB Claude Code file: 4 GB)."""

    def read_deferred(self, path: Path) -> list[ImportedSession]:
        """`read`, the branches' events built by `ImportedSession.built`."""
        ...


class Writer(Protocol):
    """Writes a Forkwise session as a native session of one tool."""

    tool: Tool

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        """The tool's own sessions folder on this machine."""
        ...

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        """Write `session` under `root` (the tool's folder layout) or to `out`; a missing
        folder for `out` is an error and nothing is written."""
        ...


_SLUG = re.compile(r"[a-z0-9]+")
#: what of a source id is kept as it is (OpenCode's `ses_…` ids keep their underscore)
_ID_RUNS = re.compile(r"[a-z0-9_]+")
#: how an id ends when `source_session_id` added a digest to it
_DIGEST_END = re.compile(r"-[0-9a-f]{8}$")


def source_session_id(tool: str, source_id: str, branch: str | None = None) -> str:
    """The deterministic Forkwise id of a source session (`claude-<id>`) or of a branch
    derived from it (`claude-<id>-<branch>`), kept within the 64 characters an id may have.

    Two different source ids never give one id: when the slug is not the source id itself
    (`A_B`, `a.b` and `a-b`, where `a_b` stays; `CaseID` and `caseid`; an id of letters a
    slug drops, or an empty one; one too long to keep whole; one that ends as such a digest
    does) a short digest of the source id follows it."""
    clean = "-".join(_ID_RUNS.findall(source_id.lower())) or "session"
    stem = f"{tool}-{clean}"
    mark = ""
    if clean != source_id or len(stem) > 64 or _DIGEST_END.search(clean):
        raw = source_id.encode("utf-8", "surrogatepass")
        mark = "-" + blake2b(raw, digest_size=4).hexdigest()
    if branch is None:
        return stem[: 64 - len(mark)] + mark
    tail = "-".join(_SLUG.findall(branch.lower()))[:16] or "branch"
    return f"{stem[: 63 - len(tail) - len(mark)]}{mark}-{tail}"


def message_id(role: str, text: str, key: str) -> str:
    """A readable, deterministic message id, `role:slug:suffix`: the slug from the text, the
    suffix from `key` (the source's own id for the entry, or its position), so that reading
    the same source twice gives the same ids."""
    digest = blake2b(key.encode(), digest_size=4).hexdigest()
    if len(text) > _SLUG_KEPT:
        return f"{role}:{slugify(text) or 'message'}:{digest}"
    # short texts repeat (a tool call's id is made from the tool's name): their slugs are
    # kept, bounded, as slugifying is most of the cost of an id
    slug = _slugs.get(text)
    if slug is None:
        if len(_slugs) >= _SLUGS_MAX:
            _slugs.clear()
        slug = _slugs[text] = slugify(text) or "message"
    return f"{role}:{slug}:{digest}"


#: texts up to this long have their slug kept (a tool name, a short reply)
_SLUG_KEPT = 48
_SLUGS_MAX = 4096
_slugs: dict[str, str] = {}


def jsonl_files(root: Path) -> list[Path]:
    """Every `*.jsonl` file under the folder `root`, in the order of `sorted(root.rglob(…))`
    (symlinked folders not entered; links, FIFOs and devices of that name kept, so that
    reading them reports them by code: `read_source`), found with `os.scandir` alone:
    an import of an unchanged tree costs a stat per file, and pathlib's walk and sort cost
    several times that."""
    found: list[tuple[str, Path]] = []  # (sort key: the separator sorts first, as parts do)
    stack = [root]
    while stack:
        folder = stack.pop()
        key = str(folder).replace(os.sep, "\0") + "\0"
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(folder / entry.name)
                        elif entry.name.endswith(".jsonl") and not entry.is_dir():
                            found.append((key + entry.name, folder / entry.name))
                    except OSError:
                        continue
        except OSError:
            continue
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Reading and importing build hundreds of thousands of small acyclic containers and
    keep them: the cyclic collector would walk that growing heap again and again (a third
    of a large import, measured). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def read_source(path: Path) -> bytes:
    """A tool's session file, read the one safe way (`forkwise.core.safe_read`): a regular
    file only (a FIFO or device named *.jsonl in an agent's folder must not hang an import
    or the folder watcher), a link followed only to a file inside the link's own folder,
    whole, within the size a session file may have. What is refused raises a
    ForkwiseError with its own code (see `unsafe`); other failures stay OSErrors."""
    return read_source_stat(path)[0]


def read_source_stat(path: Path) -> tuple[bytes, os.stat_result]:
    """`read_source`, and the file's stat as it was read (for a reader that keeps what it
    parsed by size and mtime: no second stat of the file)."""
    try:
        return read_regular(path, follow=INSIDE)
    except (NotRegularFile, LinkOutside, FileTooLarge) as exc:
        raise unsafe(exc, path) from exc


def unsafe(exc: OSError, path: Path) -> ForkwiseError:
    """The error an import reports for a file the safe reader refused: a FIFO, socket or
    device (`not-a-regular-file`), a link out of its folder (`link-out-of-folder`), too
    large (`source-too-large`)."""
    if isinstance(exc, LinkOutside):
        return LinkOutOfFolder(f"{path}: {exc.strerror}; not followed", path=str(path))
    if isinstance(exc, FileTooLarge):
        return SourceTooLarge(f"{path}: {exc.strerror}", path=str(path))
    return NotRegularSource(
        f"{path} is not a regular file (a FIFO, socket or device); not read", path=str(path)
    )


#: an exported session file's mode, as private as the tools keep their own
EXPORT_MODE = 0o600


def write_new_file(target: Path, data: bytes) -> None:
    """Write `data` as the new file `target`, whole or not at all, never over anything:
    a temporary file of a random name made with O_EXCL in the target's folder (a name
    planted there, even a link, is not written through), synced, then hard-linked to
    `target` — which fails when anything is there already (a file, another tool's
    session, the session's own source, a folder, a FIFO, a link): `exists`. The file is
    0600 whatever the umask."""
    import contextlib
    import tempfile

    folder = target.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        message = f"cannot write in {folder}: {exc.strerror or exc}"
        raise StorageError(message, path=str(target)) from exc
    try:
        try:
            os.fchmod(fd, EXPORT_MODE)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, target)
    except FileExistsError as exc:
        raise TargetExists(
            f"{target} exists already; an export never replaces a file (nothing was written)",
            path=str(target),
        ) from exc
    except OSError as exc:
        message = f"cannot write {target}: {exc.strerror or exc}"
        raise StorageError(message, path=str(target)) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    with contextlib.suppress(OSError):
        dirfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)


def make_private_folders(folder: Path) -> None:
    """`folder` and every missing folder above it, each 0700 (`mkdir(parents=True)` makes
    the ones above with the default mode: a session's folders in 0755 ones)."""
    missing: list[Path] = []
    at = folder
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # whatever the umask
