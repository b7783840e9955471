"""What the JSON Lines backend keeps where a person can find it, rather than deleting it.

A deleted session's file goes to `<store>/trash/` (and comes back from there on Undo); a
crash's torn last line, and the previous version a crash mid-rewrite left (`.old`), go to
`<store>/recovered/`. Temporary files a crash left beside the logs are swept away when a
writer opens the store. Each function raises OSError; the backend wraps it.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from forkwise.core.errors import DuplicateSessionId
from forkwise.core.log.events import now_ts
from forkwise.core.store.atomic import fsync_dir, write_file_atomically
from forkwise.core.store.backends.jsonl_read import Tail
from forkwise.core.store.store_dir import make_private_dir


def sweep_leftovers(root: Path, sessions_dir: Path) -> None:
    """Clear what a crash mid-write can leave beside the logs (the writer lock is held,
    so no write is in flight): unplaced temp files go, and the previous version kept
    during a rewrite (`.old`) moves to `<store>/recovered/`, where a person can find it."""
    for folder in (root, sessions_dir):
        try:
            names = [n for n in os.listdir(folder) if n.startswith(".")]
        except OSError:
            continue
        for name in names:
            path = folder / name
            with contextlib.suppress(OSError):
                if name.endswith(".tmp"):
                    path.unlink()
                elif name.endswith(".old"):
                    recovered = root / "recovered"
                    make_private_dir(recovered)
                    os.replace(path, recovered / name.lstrip("."))


def keep_torn_tail(root: Path, session_id: str, torn: bytes) -> None:
    """Keep a crash's torn last line in `<store>/recovered/`."""
    recovered = root / "recovered"
    make_private_dir(recovered)
    keep = recovered / f"{session_id}.{stamp()}.torn-tail"
    write_file_atomically(keep, torn, overwrite=False)


def cut_torn_tail(root: Path, session_id: str, path: Path, tail: Tail) -> None:
    """Keep a crash's torn last line where a person can find it, then drop it from
    the log so that appends continue after the last whole event."""
    assert tail.torn is not None
    keep_torn_tail(root, session_id, tail.torn)
    with open(path, "r+b") as fh:
        fh.truncate(tail.good_length)
        os.fsync(fh.fileno())
    tail.torn = None


def trash(root: Path, sessions_dir: Path, session_id: str, path: Path) -> None:
    """Move a session's file to `<store>/trash/`, under a name with the time; when the
    move cannot be made durable, the file is put back (the store still has it)."""
    folder = root / "trash"
    make_private_dir(folder)
    trashed = folder / f"{session_id}.{stamp()}.jsonl"
    os.replace(path, trashed)
    try:
        fsync_dir(sessions_dir)
    except OSError:
        with contextlib.suppress(OSError):
            os.replace(trashed, path)  # the store still has the session: so does the disk
        raise


def untrash(root: Path, sessions_dir: Path, session_id: str, path: Path) -> bool:
    """Move the latest trashed copy of a session (`trash`) back to `path`; False when
    there is none. DuplicateSessionId when `path` is taken."""
    trashed = re.compile(re.escape(session_id) + r"\.\d{4}-\d{2}-\d{2}T\d+Z\.jsonl")
    try:
        names = sorted(e.name for e in os.scandir(root / "trash") if trashed.fullmatch(e.name))
    except FileNotFoundError:
        return False
    if not names:
        return False
    if path.exists():
        raise DuplicateSessionId(f"a session {session_id!r} exists already",
                                 session_id=session_id)
    os.replace(root / "trash" / names[-1], path)
    fsync_dir(sessions_dir)
    return True


#: a trashed copy's file name: the session's id, then when it was deleted (`stamp`)
_TRASHED = re.compile(r"(.+)\.(\d{4}-\d{2}-\d{2})T(\d\d)(\d\d)(\d\d)(\d{3})Z\.jsonl")


def trashed_files(root: Path) -> list[tuple[str, str, Path]]:
    """Each deleted session's latest copy in `<store>/trash/`: (id, when it was deleted,
    path), the latest deleted first."""
    latest: dict[str, tuple[str, Path]] = {}
    for found, path in _trashed(root):
        sid, day, hh, mm, ss, ms = found.groups()
        when = f"{day}T{hh}:{mm}:{ss}.{ms}Z"
        if sid not in latest or latest[sid][0] < when:
            latest[sid] = (when, path)
    rows = [(sid, when, path) for sid, (when, path) in latest.items()]
    return sorted(rows, key=lambda row: row[1], reverse=True)


def remove_trashed(root: Path, session_id: str | None) -> list[str]:
    """Delete for good every trashed copy of `session_id` (of all when None); the ids."""
    removed: set[str] = set()
    for found, path in _trashed(root):
        if session_id in (None, found.group(1)):
            os.unlink(path)
            removed.add(found.group(1))
    if removed:
        fsync_dir(root / "trash")
    return sorted(removed)


def _trashed(root: Path) -> list[tuple[re.Match[str], Path]]:
    """The trashed copies in `<store>/trash/`, each with its name's parts."""
    try:
        names = os.listdir(root / "trash")
    except FileNotFoundError:
        return []
    return [(found, root / "trash" / name) for name in names
            if (found := _TRASHED.fullmatch(name)) is not None]


def stamp() -> str:
    """The time, for a file name."""
    return now_ts().replace(":", "").replace(".", "")
