"""Keeping up with the agents: the tools' session folders watched while a host runs, so that
a session Claude Code, Codex, pi, Gemini CLI or OpenCode writes appears within a couple of
seconds and grows live.

Each pass lists the tools' session files and imports those whose size or modification time
changed since the last import (the import ledger answers from one `stat` per file; an
OpenCode database's stamp counts its WAL file, where OpenCode's writes land first), through
the one import verb. Polling keeps it the same on every platform and file system; a pass
over 2,000 unchanged files costs a few milliseconds of stat calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from forkwise.core.host.import_ledger import source_stamp

# the import verb (and the formats behind it) is imported when a folder is first watched:
# a host that watches none, as a one-shot command's, never loads it

log = logging.getLogger(__name__)
Json = dict[str, Any]
#: seconds between two passes
INTERVAL = 1.5
#: files imported in one piece of store work
BATCH = 16


def available_sources(env: Mapping[str, str], home: Path) -> list[Json]:
    """The tools whose default session folders exist on this machine, with those folders."""
    from forkwise.core.host.importing import FORMATS, UnknownFormat, reader

    out: list[Json] = []
    for tool in FORMATS:
        try:
            found = reader(tool).default_roots(env, home)
        except UnknownFormat:
            continue  # a format this build does not have
        roots = [str(r) for r in found if r.exists()]
        out.append({"tool": tool, "folders": roots, "found": bool(roots)})
    return out


class SourceWatcher:
    """Imports what changed in the watched tools' folders, every `interval` seconds.

    `run_import(files)` is the host's import verb on a list of (path, tool) pairs; it is
    only called with files whose stat changed (or that are new). `progress(done, total,
    path)` hears after each batch of a pass; `warned(warnings)` after a later pass (not
    the first, whose report `sources.watch` answers with) that kept lines unread."""

    def __init__(
        self,
        run_import: Callable[[list[tuple[Path, str | None]]], Awaitable[Json]],
        changed: Callable[[Path], bool],
        *,
        progress: Callable[[int, int, str], None] | None = None,
        warned: Callable[[list[Json]], None] | None = None,
        interval: float = INTERVAL,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
    ) -> None:
        self._run_import = run_import
        self._changed = changed
        self._progress = progress
        self._warned = warned
        self.interval = interval
        self.env = dict(os.environ if env is None else env)
        self.home = home or Path(os.path.expanduser("~"))
        self.tools: list[str] = []
        self.folders: dict[str, list[Path]] = {}
        self._task: asyncio.Task[None] | None = None
        self.passes = 0
        #: files that failed to import, as they were: not tried again until they change
        self._failed: dict[Path, tuple[int, int]] = {}

    def watch(
        self, tools: Sequence[str], folders: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        """Watch these tools (their default folders, or `folders[tool]`); none stops."""
        from forkwise.core.host.importing import FORMATS, reader

        self.tools = [t for t in tools if t in FORMATS]
        self.folders = {
            t: [Path(f) for f in (folders or {}).get(t, [])]
            or list(reader(t).default_roots(self.env, self.home))
            for t in self.tools
        }
        if self.tools and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())
        elif not self.tools:
            self.stop()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        # `sources.watch` runs the first pass itself and reports it (its failures and
        # warnings): a pass of this loop at the same moment would import the same files
        # first, and that report would say nothing of them
        while True:
            await asyncio.sleep(self.interval)
            try:
                report = await self.scan()
                if report is not None and report["warnings"] and self._warned is not None:
                    self._warned(report["warnings"])  # a changed file's unread lines
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("watching the agents' session folders failed; trying again")

    async def scan(self) -> Json | None:
        """One pass: import what changed; the import report, or None when nothing did."""
        files = await asyncio.to_thread(self._changed_files)
        self.passes += 1
        if not files:
            return None
        report: Json = {
            "imported": [], "updated": [], "unchanged": [], "failed": [], "warnings": []
        }
        for start in range(0, len(files), BATCH):
            # a batch at a time: the store worker takes other work (opening a session, a
            # fork) between batches, also during a first import of a long history
            batch = files[start : start + BATCH]
            part = await self._run_import(batch)
            for key in report:
                report[key] += part.get(key, [])
            if self._progress is not None:
                self._progress(start + len(batch), len(files), str(batch[-1][0]))
        for failure in report["failed"]:
            path = Path(failure["path"])
            with contextlib.suppress(OSError):
                st = source_stamp(path)
                self._failed[path] = (st.st_size, st.st_mtime_ns)
        return report

    def _changed_files(self) -> list[tuple[Path, str | None]]:
        from forkwise.core.host.importing import discover

        found: list[tuple[Path, str | None]] = []
        for tool in self.tools:
            roots = [r for r in self.folders.get(tool, []) if r.exists()]
            if roots:
                found += discover(tool, roots, self.env, self.home)
        return [(p, t) for p, t in found if self._changed(p) and not self._failed_as_is(p)]

    def _failed_as_is(self, path: Path) -> bool:
        known = self._failed.get(path)
        if known is None:
            return False
        try:
            st = source_stamp(path)
        except OSError:
            return True
        return known == (st.st_size, st.st_mtime_ns)
