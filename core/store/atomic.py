"""Whole-file writes that a crash cannot leave half done.

The data goes to a temporary file beside the target, is fsynced, then moved into place
(`os.replace`, or a hard link when an existing file must not be overwritten), and the
directory is fsynced so the new name is durable too. Raises OSError; the callers wrap it
into their own error types.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from forkwise.core.log.ids import random_hex

PRIVATE_FILE = 0o600


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_file_atomically(
    path: Path,
    data: bytes | Callable[[int], None],
    *,
    mode: int = PRIVATE_FILE,
    overwrite: bool = True,
    sync_dir: bool = True,
) -> None:
    """`data` is the content, or a function that writes it to the file descriptor it is
    given (e.g. copying a byte range from another file). `sync_dir` False: the caller
    fsyncs the directory later, once for many new files (the file itself is durable before
    it gets its name, so a crash leaves it whole or absent, never in part)."""
    tmp = path.with_name(f".{path.name}.{random_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    backup: Path | None = None
    try:
        try:
            if callable(data):
                data(fd)
            else:
                write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            # keep the old file under a second name until the new one is durable, so that a
            # failing directory fsync can put it back instead of leaving a half-done change
            backup = path.with_name(f".{path.name}.{random_hex(4)}.old")
            try:
                os.link(path, backup)
            except FileNotFoundError:
                backup = None
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails with FileExistsError rather than overwrite
            os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)
        raise
    try:
        if sync_dir:
            fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            if backup is not None:
                os.replace(backup, path)
            else:
                os.unlink(path)
        raise
    if backup is not None:
        with contextlib.suppress(OSError):
            os.unlink(backup)


def replace_file(path: Path, data: bytes, *, mode: int = PRIVATE_FILE) -> os.stat_result:
    """Put `data` in place at once (a reader sees the old file or the new one), without
    waiting for the disk: for caches, which a crash may leave old, empty or unreadable,
    and which are rebuilt from the files they summarize when they are. Returns the new
    file's stat as written (the name may be another file's by the time a caller looks)."""
    tmp = path.with_name(f".{path.name}.{random_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            write_all(fd, data)
            written = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return written


def fsync_path(path: Path) -> None:
    """fsync what `path` names: a file (its content) or a folder (the names in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fsync_path(path)
