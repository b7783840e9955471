"""Keeping up with the agents: the tools' session folders watched while a host runs, so that
a session Claude Code, Codex, pi, Gemini CLI or OpenCode writes appears at once and grows
live.

On Linux the folders are followed with inotify (`forkwise.core.inotify`): nothing runs
while nothing changes. After a burst of writes the files it named are imported when their
size or modification time changed since the last import (the import ledger answers from
one `stat` per file; an OpenCode database's stamp counts its WAL file, where OpenCode's
writes land first, so a change of `opencode.db-wal` names the database); a new folder, a
file not seen before or an overflowed queue looks at the tools' trees whole. Where
inotify cannot be had (another system, the watch limit reached) every `interval` seconds
the trees are looked at whole instead: a pass over 2,000 unchanged files costs a few
milliseconds of stat calls. A session file that goes (the tool deleted it) is told to
`vanished`: its sessions stay in the store.
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
from forkwise.core.inotify import TreeFollower

# the import verb (and the formats behind it) is imported when a folder is first watched:
# a host that watches none, as a one-shot command's, never loads it

log = logging.getLogger(__name__)
Json = dict[str, Any]
#: seconds between two passes where the kernel's notifications cannot be had
INTERVAL = 1.5
#: folders under a tool's root that hold no session file worth following (OpenCode's
#: snapshots are git repositories, its older storage's message and part folders hold a
#: folder per message: its session files say when they change)
PRUNED: dict[str, tuple[str, ...]] = {
    "opencode": ("snapshot", "bin", "log", "tool-output", "storage/message", "storage/part"),
}
#: files beside a SQLite database that change with it
_DB_SIDES = ("-wal", "-journal", "-shm")
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
    """Imports what changed in the watched tools' folders, as the kernel reports it (or
    every `interval` seconds where it cannot).

    `run_import(files)` is the host's import verb on a list of (path, tool) pairs; it is
    only called with files whose stat changed (or that are new). `progress(done, total,
    path)` hears after each batch of a pass; `warned(warnings)` after a later pass (not
    the first, whose report `sources.watch` answers with) that kept lines unread;
    `vanished(paths)` after a pass that found session files of an earlier look gone."""

    def __init__(
        self,
        run_import: Callable[[list[tuple[Path, str | None]]], Awaitable[Json]],
        changed: Callable[[Path], bool],
        *,
        progress: Callable[[int, int, str], None] | None = None,
        warned: Callable[[list[Json]], None] | None = None,
        vanished: Callable[[list[Path]], Awaitable[None]] | None = None,
        interval: float = INTERVAL,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        use_inotify: bool = True,
    ) -> None:
        self._run_import = run_import
        self._changed = changed
        self._progress = progress
        self._warned = warned
        self._vanished = vanished
        self.interval = interval
        self.use_inotify = use_inotify
        self.env = dict(os.environ if env is None else env)
        self.home = home or Path(os.path.expanduser("~"))
        self.tools: list[str] = []
        self.folders: dict[str, list[Path]] = {}
        self._task: asyncio.Task[None] | None = None
        self.passes = 0
        #: how the folders are followed: "inotify", or "poll" every `interval` seconds
        self.kind = "poll"
        self._follower: TreeFollower | None = None
        self._wake = asyncio.Event()
        #: paths the kernel named since the last pass; None: look at the trees whole
        self._named: set[str] | None = set()
        #: the session files of the last whole look, by path
        self._known: dict[str, tuple[Path, str | None]] = {}
        self._scanning = asyncio.Lock()  # one pass at a time: no file imported twice
        #: files that failed to import, as they were: not tried again until they change
        self._failed: dict[Path, tuple[int, int]] = {}
        #: session files of an earlier look found gone since the last pass told them
        self._gone: list[Path] = []

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
        self._unfollow()
        self._known = {}
        if not self.tools:
            self.stop()
            return
        self._follow()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    def _follow(self) -> None:
        """Follow the folders with the kernel's notifications, when it has them; set up
        before the first pass (`sources.watch` runs it), so nothing written after that
        pass goes unheard."""
        self.kind = "poll"
        if not self.use_inotify:
            return
        loop = asyncio.get_running_loop()
        roots = [r for t in self.tools for r in self.folders[t]]
        pruned = [r / sub for t in self.tools for r in self.folders[t] for sub in PRUNED.get(t, ())]

        def heard(paths: set[str] | None) -> None:  # on the follower's thread
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._heard, paths)

        try:
            self._follower = TreeFollower(roots, heard, [str(p) for p in pruned]).start()
        except (OSError, AttributeError, TypeError) as exc:  # no inotify: poll instead
            log.info("the agents' folders are polled: %s", exc)
            return
        self.kind = "inotify"

    def _heard(self, paths: set[str] | None) -> None:
        if paths is None or self._named is None:
            self._named = None
        else:
            self._named |= paths
        if self._follower is not None and self._follower.failed:
            self._unfollow()  # polls from now on
        self._wake.set()

    def _unfollow(self) -> None:
        follower, self._follower = self._follower, None
        if follower is not None:
            follower.stop()
        self.kind = "poll"

    def stop(self) -> None:
        self._unfollow()
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def close(self) -> None:
        self._unfollow()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        # `sources.watch` runs the first pass itself and reports it (its failures and
        # warnings): a pass here waits for it (`_scanning`) and finds those files imported
        while True:
            if self.kind == "inotify":
                await self._wake.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            named, self._named = self._named, set()
            try:
                report = await self.scan(None if self.kind == "poll" else named)
                if report is not None and report["warnings"] and self._warned is not None:
                    self._warned(report["warnings"])  # a changed file's unread lines
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("watching the agents' session folders failed; trying again")

    async def scan(self, named: set[str] | None = None) -> Json | None:
        """One pass: import what changed (among the files `named`, or in the trees
        whole); the import report, or None when nothing did."""
        async with self._scanning:
            files = await asyncio.to_thread(self._changed_files, named)
            self.passes += 1
            gone, self._gone = self._gone, []
            if gone and self._vanished is not None:
                await self._vanished(gone)
            if not files:
                return None
            return await self._import(files)

    async def _import(self, files: list[tuple[Path, str | None]]) -> Json:
        report: Json = {
            "imported": [],
            "updated": [],
            "unchanged": [],
            "failed": [],
            "warnings": [],
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

    def _changed_files(self, named: set[str] | None) -> list[tuple[Path, str | None]]:
        found = self._named_files(named) if named is not None and self._known else None
        if found is None:
            found = self._whole()
        return [(p, t) for p, t in found if self._changed(p) and not self._failed_as_is(p)]

    def _named_files(self, named: set[str]) -> list[tuple[Path, str | None]] | None:
        """The known session files among `named` (a database for its WAL); None when a
        name is no file of the last whole look (a new session file, perhaps)."""
        out: dict[str, tuple[Path, str | None]] = {}
        for name in named:
            hit = self._known.get(name)
            if hit is None and name.endswith(_DB_SIDES):
                hit = self._known.get(name.rsplit("-", 1)[0])
            if hit is None:
                if os.path.isfile(name):
                    return None
                continue  # gone (a temporary file renamed), never a session file
            if not os.path.lexists(hit[0]):  # a session file the tool deleted or moved
                self._known.pop(os.path.abspath(hit[0]), None)
                self._gone.append(hit[0])
                continue
            out[str(hit[0])] = hit
        return list(out.values())

    def _whole(self) -> list[tuple[Path, str | None]]:
        from forkwise.core.host.importing import discover

        found: list[tuple[Path, str | None]] = []
        for tool in self.tools:
            roots = [r for r in self.folders.get(tool, []) if r.exists()]
            if roots:
                found += discover(tool, roots, self.env, self.home)
        before, self._known = self._known, {os.path.abspath(p): (p, t) for p, t in found}
        self._gone += [p for key, (p, _) in before.items()
                       if key not in self._known and not os.path.lexists(p)]
        return found

    def _failed_as_is(self, path: Path) -> bool:
        known = self._failed.get(path)
        if known is None:
            return False
        try:
            st = source_stamp(path)
        except OSError:
            return True
        return known == (st.st_size, st.st_mtime_ns)
