"""Making a store's folder ready for writing, without touching what is not the store's.

Reading never creates or changes anything (a read-only backend calls none of this). A
writer creates the store only in a folder that is new, empty or already a store (every
name in it one the store itself makes), so a mistyped `--store ~` or `FORKWISE_STORE=/tmp`
is refused instead of filled. Folders this module creates are made 0700; folders that exist
keep their mode (re-moding `/tmp` would strip its sticky bit). `sessions/` must be a real
folder: a symbolic link there is refused, never followed to change its target.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from forkwise.core.errors import StorageError

DIR_MODE = 0o700

#: every name a store puts in its folder (temp files start with "." and are left out)
STORE_NAMES = frozenset(
    {
        "sessions",
        "index.json",
        "index-log.json",
        "index-head.json",
        "writer.lock",
        "workspaces.json",
        "imports.json",
        "host.sock",
        "trash",
        "recovered",
        "demo-workspace",
        "search.sqlite",
        "replay",
    }
)


def prepare_for_writing(root: Path) -> Path:
    """Create (or check) `root` and `root/sessions` for a writer; returns the sessions
    folder. Raises StorageError when `root` is a folder of something else, or `sessions`
    is not a real folder."""
    try:
        created = _make_dir(root, parents=True)
        if not created:
            if not root.is_dir():
                raise StorageError(f"cannot open the store at {root}: it is not a folder")
            strangers = sorted(
                n for n in os.listdir(root) if n not in STORE_NAMES and not n.startswith(".")
            )
            if strangers and not _is_dir_no_follow(root / "sessions"):
                shown = ", ".join(strangers[:3]) + (" …" if len(strangers) > 3 else "")
                raise StorageError(
                    f"cannot create a store in {root}: the folder is not empty and is not a"
                    f" Forkwise store (it holds {shown}); name an empty or new folder",
                    store=str(root),
                )
        sessions = root / "sessions"
        if not _make_dir(sessions, parents=False) and not _is_dir_no_follow(sessions):
            raise StorageError(
                f"cannot open the store at {root}: {sessions} is not a folder"
                " (a symbolic link or a file there is not followed)",
                store=str(root),
            )
    except OSError as exc:
        raise StorageError(f"cannot open the store at {root}: {exc}") from exc
    return sessions


def make_private_dir(path: Path) -> None:
    """`path` as a folder (created 0700 when missing; one that exists keeps its mode).
    Raises StorageError when something other than a real folder is there."""
    if not _make_dir(path, parents=False) and not _is_dir_no_follow(path):
        raise StorageError(f"{path} is not a folder (a symbolic link there is not followed)")


def _make_dir(path: Path, *, parents: bool) -> bool:
    """Create `path` 0700; False when something already exists there."""
    try:
        if parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return False
    return True  # a umask only takes bits away: 0700 or stricter, never wider


def _is_dir_no_follow(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
