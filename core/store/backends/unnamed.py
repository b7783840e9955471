"""New session files written whole but not named yet: their fsyncs run together.

An import creates hundreds of files, each of which must be durable before it gets its
name. One fsync at a time costs a journal commit each (5 to 13 ms here, measured: 870 Codex
rollouts spent longer in fsync than in reading them); fsyncs in flight together share a
commit (100 files: 0.50 s one by one, 0.04 s four at a time, measured). So a file created
with `name_later` gets its temporary file at once, its bytes are written and fsynced on a
small pool of threads while the import goes on reading, and it is linked to its name in
`name_all` after that fsync returned — never before. A crash before then leaves only the
temporary file, which the next writer sweeps away (`JsonlBackend._sweep_leftovers`).

The write is the pool's too: writing a file into the page cache waits whenever the
kernel holds back writers for the disk (a 200 MB import spent a third of its time
there, measured on a busy machine), and the import's own work need not wait with it. A
write that fails is found as a failed fsync is, when the file is to be named.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from forkwise.core.log.ids import random_hex
from forkwise.core.store.atomic import write_all

#: fsyncs in flight at once (they wait on the disk, not on a CPU)
_THREADS = 8


@dataclass(slots=True)
class _Unnamed:
    path: Path
    tmp: Path
    fd: int
    synced: Future[None]


class UnnamedFiles:
    """Files written to temporary names, each named once its own fsync is over."""

    def __init__(self) -> None:
        self._files: dict[str, _Unnamed] = {}
        self._pool: ThreadPoolExecutor | None = None

    def __contains__(self, key: str) -> bool:
        return key in self._files

    def __len__(self) -> int:
        return len(self._files)

    def write(self, key: str, path: Path, data: bytes, mode: int) -> None:
        """Create a temporary file beside `path` and start writing `data` to it and its
        fsync; raises OSError (and leaves nothing) when the file cannot be created. A
        failed write or fsync is `name_all`'s to report."""
        tmp = path.with_name(f".{path.name}.{random_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(_THREADS, thread_name_prefix="forkwise-fsync")
            synced = self._pool.submit(_write_synced, fd, data)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._files[key] = _Unnamed(path, tmp, fd, synced)

    def name_all(self, named: Callable[[str, Path], None]) -> dict[str, OSError]:
        """Wait for every fsync and give each file its name (a hard link: an existing name
        is never overwritten), calling `named(key, path)` for each. Returns the files that
        failed (neither their temporary file nor their name left: not on disk), by key,
        with why."""
        files, self._files = self._files, {}
        failed: dict[str, OSError] = {}
        for key, f in files.items():
            linked = False
            try:
                try:
                    f.synced.result()
                finally:
                    os.close(f.fd)
                os.link(f.tmp, f.path)
                linked = True
                # the temporary name goes first: its unlink changes the file's ctime, and
                # `named` takes the file's identity (an index entry is kept only for a
                # file as the backend left it)
                with contextlib.suppress(OSError):
                    os.unlink(f.tmp)
                named(key, f.path)
            except OSError as exc:
                failed[key] = exc
                if linked:  # the name is this file's own (a link never overwrites)
                    with contextlib.suppress(OSError):
                        os.unlink(f.path)
            with contextlib.suppress(OSError):
                os.unlink(f.tmp)
        return failed

    def close(self) -> None:
        """Stop the fsync threads (after `name_all`, or giving up what is unnamed)."""
        for f in self._files.values():
            with contextlib.suppress(Exception):
                f.synced.result()
            os.close(f.fd)
            with contextlib.suppress(OSError):
                os.unlink(f.tmp)
        self._files.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _write_synced(fd: int, data: bytes) -> None:
    write_all(fd, data)
    os.fsync(fd)
