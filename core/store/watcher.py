"""Watching a store's `sessions/` folder for changes made by other programs (an editor, a
sync tool, an agent writing its own logs).

One thread per watched store. It wakes when the kernel reports a change (inotify, through
the `watchfiles` package; then every `SAFETY_NET` seconds as well) or, where that is not
to be had or stops, every `POLL` seconds, and then
compares the folder with what it saw last: which `<id>.jsonl` files appeared, went, or
changed (inode, size, mtime, ctime). The differences go to `on_change` on that thread;
whoever receives them decides which were its own writes. The kernel's reports only say
which files to look at again (a look at 10,000 files costs ~30 ms, at the few files a
turn writes well under one); each is compared the same way, so both ways report exactly
the same differences.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

#: seconds between looks when the kernel does not wake the watcher (and its upper bound)
POLL = 1.0
#: seconds between looks while the kernel does wake it: only a safety net (a look at
#: 10,000 session files costs ~30 ms, measured; every second would be 3% of a core)
SAFETY_NET = 30.0
#: seconds after start by which the kernel's watch is surely set up: one whole look then
#: finds what changed before it was (only a safety net after that)
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
        self.kind = "poll"
        if use_inotify:
            try:
                import watchfiles  # noqa: F401  (the kernel's notifications, when available)
            except ImportError:
                pass
            else:
                self.kind = "inotify"

    def start(self) -> StoreWatcher:
        self._settle_until = time.monotonic() + self._settle
        looker = threading.Thread(target=self._look, name="forkwise-watch", daemon=True)
        self._threads.append(looker)
        if self.kind == "inotify":
            waker = threading.Thread(target=self._notify, name="forkwise-inotify", daemon=True)
            self._threads.append(waker)
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
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
            if self.kind == "poll":
                timeout = self.poll
            else:
                timeout = left if left > 0 else max(self.poll, SAFETY_NET)
            woken = self._wake.wait(timeout)
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._named_lock:
                named, self._named = self._named, set()
            # a timeout (the settling look, the safety net, a poll), a large report, or
            # the kernel's watch gone: the whole folder; else the files reported
            whole = not woken or named is None or self.kind == "poll"
            self.look_now(None if whole else named)

    def _notify(self) -> None:
        """Wake the looker on each batch of kernel notifications (watchfiles, inotify)."""
        import watchfiles

        try:
            for batch in watchfiles.watch(
                self.sessions_dir,
                stop_event=self._stop,
                debounce=200,
                step=50,
                rust_timeout=int(self.poll * 1000),
                yield_on_timeout=False,
                raise_interrupt=False,
                recursive=False,
            ):
                self._name(batch)
                self._wake.set()
        except Exception:  # a folder that went, a watch limit: polling carries on
            log.info("kernel notifications for %s stopped; polling", self.sessions_dir)
        if not self._stop.is_set():
            self.kind = "poll"
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
