"""Watching a store's `sessions/` folder for changes made by other programs (an editor, a
sync tool, an agent writing its own logs).

One thread per watched store. It sleeps until the kernel reports a change (inotify,
through `forkwise.core.inotify`, the follower the host uses for the agents' folders: no
periodic wake while nothing changes) or, where that is not to be had or stops, looks
every `POLL` seconds, and then compares the folder with what it saw last: which
`<id>.jsonl` files appeared, went, or changed (inode, size, mtime, ctime). The
differences go to `on_change` on that thread; whoever receives them decides which were
its own writes. The kernel's reports only say which files to look at again (a look at
10,000 files costs ~30 ms, at the few files a turn writes well under one); each is
compared the same way, so both ways report exactly the same differences.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from forkwise.core import inotify

log = logging.getLogger(__name__)

#: seconds between looks when the kernel does not wake the watcher
POLL = 1.0
#: seconds after start of one whole look, which finds what changed between the first
#: look and the kernel's watch (set up by `start`); after it the watcher only sleeps
SETTLE = 3.0
#: files in one kernel report above which the whole folder is looked at instead (a burst,
#: or a report the kernel had to cut short)
MANY = 256
SUFFIX = ".jsonl"


@dataclass
class Changes:
    """Session ids whose files appeared, changed or went since the last look."""

    added: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


Identity = tuple[int, int, int, int]


def scan(sessions_dir: Path) -> dict[str, Identity]:
    """Every session file's identity (links not followed: they are not session files)."""
    out: dict[str, Identity] = {}
    try:
        with os.scandir(sessions_dir) as it:
            for entry in it:
                name = entry.name
                if not name.endswith(SUFFIX) or name.startswith("."):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out[name[: -len(SUFFIX)]] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        pass
    return out


def identity_of(path: Path) -> Identity | None:
    """A session file's identity as `scan` takes it; None when it is not there."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def diff(before: dict[str, Identity], after: dict[str, Identity]) -> Changes:
    return Changes(
        added={k for k in after if k not in before},
        changed={k for k, v in after.items() if k in before and before[k] != v},
        removed={k for k in before if k not in after},
    )


class StoreWatcher:
    """Reports changes to `sessions_dir` to `on_change` until `stop`."""

    def __init__(
        self,
        sessions_dir: Path,
        on_change: Callable[[Changes], None],
        *,
        poll: float = POLL,
        use_inotify: bool = True,
        settle: float = SETTLE,
    ) -> None:
        self.sessions_dir = sessions_dir
        self.on_change = on_change
        self.poll = poll
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._seen = scan(sessions_dir)
        self._looking = threading.Lock()  # one look at a time, reports in order
        #: session ids the kernel reported since the last look; None: look at all
        self._named: set[str] | None = set()
        self._named_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._settle = settle
        self._settle_until = 0.0
        self._follower: inotify.TreeFollower | None = None
        self.kind = "inotify" if use_inotify and inotify.available() else "poll"

    def start(self) -> StoreWatcher:
        if self.kind == "inotify":
            try:
                self._follower = inotify.TreeFollower(
                    [self.sessions_dir], self._kernel, recursive=False, name="forkwise-inotify"
                ).start()
            except OSError as exc:  # the system's watch limit: polling
                log.info("kernel notifications for %s not to be had (%s); polling",
                         self.sessions_dir, exc)  # fmt: skip
                self.kind = "poll"
        self._settle_until = time.monotonic() + self._settle
        looker = threading.Thread(target=self._look, name="forkwise-watch", daemon=True)
        self._threads.append(looker)
        looker.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._follower is not None:
            self._follower.stop()
        for thread in self._threads:
            thread.join(timeout=5.0)

    def look_now(self, names: set[str] | None = None) -> Changes:
        """Compare the folder (or only the session files `names`) with the last look now
        and report the differences (the watcher thread does this on each wake; a caller
        may too, e.g. to settle)."""
        with self._looking:
            if names is None:
                now = scan(self.sessions_dir)
                changes = diff(self._seen, now)
                self._seen = now
            else:
                changes = self._look_at(names)
            if changes:
                try:
                    self.on_change(changes)
                except Exception:
                    log.exception("a store watcher's receiver failed")
            return changes

    def _look_at(self, names: set[str]) -> Changes:
        changes, seen = Changes(), self._seen
        for sid in names:
            now, before = identity_of(self.sessions_dir / (sid + SUFFIX)), seen.get(sid)
            if now == before:
                continue
            if now is None:
                del seen[sid]
                changes.removed.add(sid)
            else:
                seen[sid] = now
                (changes.added if before is None else changes.changed).add(sid)
        return changes

    def _look(self) -> None:
        while not self._stop.is_set():
            # until the kernel's watch is surely set up, one whole look at the end of it
            # (a change made before the watch would otherwise wait for the safety net)
            left = self._settle_until - time.monotonic()
            # polling: a look every `poll`; else asleep until the kernel (or stop) wakes it
            timeout = self.poll if self.kind == "poll" else left if left > 0 else None
            woken = self._wake.wait(timeout)
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._named_lock:
                named, self._named = self._named, set()
            # a timeout (the settling look, a poll), a large report, or the kernel's
            # watch gone: the whole folder; else the files reported
            whole = not woken or named is None or self.kind == "poll"
            self.look_now(None if whole else named)

    def _kernel(self, paths: set[str] | None) -> None:
        """Wake the looker on each burst the kernel reports (on the follower's thread):
        the files it names, or None for a whole look (the folder made again, the queue
        overflowed, the follower stopped on an error, after which the watcher polls)."""
        if paths is None:
            if self._follower is not None and self._follower.failed:
                self.kind = "poll"
            with self._named_lock:
                self._named = None
        else:
            self._name([(None, p) for p in paths])
        self._wake.set()

    def _name(self, batch: Collection[tuple[object, str]]) -> None:
        """Keep the session ids a kernel report names for the next look (all of them,
        when the report is a large one)."""
        with self._named_lock:
            if self._named is None:
                return
            for _, path in batch:
                name = os.path.basename(path)
                if name.endswith(SUFFIX) and not name.startswith("."):
                    self._named.add(name[: -len(SUFFIX)])
            if len(self._named) > MANY or len(batch) > MANY:
                self._named = None
