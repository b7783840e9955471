"""Watching a store's `sessions/` folder for changes made by other programs (an editor, a
sync tool, an agent writing its own logs).

One thread per watched store. It wakes when the kernel reports a change (inotify, through
the `watchfiles` package; then every `SAFETY_NET` seconds as well) or, where that is not
to be had or stops, every `POLL` seconds, and then
compares the folder with what it saw last: which `<id>.jsonl` files appeared, went, or
changed (inode, size, mtime, ctime). The differences go to `on_change` on that thread;
whoever receives them decides which were its own writes. Waking is the only thing
`watchfiles` does here, so both ways report exactly the same differences.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

#: seconds between looks when the kernel does not wake the watcher (and its upper bound)
POLL = 1.0
#: seconds between looks while the kernel does wake it: only a safety net (a look at
#: 10,000 session files costs ~30 ms, measured; every second would be 3% of a core)
SAFETY_NET = 30.0
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
    ) -> None:
        self.sessions_dir = sessions_dir
        self.on_change = on_change
        self.poll = poll
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._seen = scan(sessions_dir)
        self._looking = threading.Lock()  # one look at a time, reports in order
        self._threads: list[threading.Thread] = []
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
        self._settle_until = time.monotonic() + 3.0
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

    def look_now(self) -> Changes:
        """Compare the folder with the last look now and report the differences (the
        watcher thread does this on each wake; a caller may too, e.g. to settle)."""
        with self._looking:
            now = scan(self.sessions_dir)
            changes = diff(self._seen, now)
            self._seen = now
            if changes:
                try:
                    self.on_change(changes)
                except Exception:
                    log.exception("a store watcher's receiver failed")
            return changes

    def _look(self) -> None:
        while not self._stop.is_set():
            # polling until the kernel's watch is surely set up (a change made before it
            # would otherwise wait for the safety net), then only the safety net
            settling = time.monotonic() < self._settle_until
            timeout = self.poll if self.kind == "poll" or settling else max(self.poll, SAFETY_NET)
            self._wake.wait(timeout)
            self._wake.clear()
            if self._stop.is_set():
                return
            self.look_now()

    def _notify(self) -> None:
        """Wake the looker on each batch of kernel notifications (watchfiles, inotify)."""
        import watchfiles

        try:
            for _ in watchfiles.watch(
                self.sessions_dir,
                stop_event=self._stop,
                debounce=200,
                step=50,
                rust_timeout=int(self.poll * 1000),
                yield_on_timeout=False,
                raise_interrupt=False,
                recursive=False,
            ):
                self._wake.set()
        except Exception:  # a folder that went, a watch limit: polling carries on
            log.info("kernel notifications for %s stopped; polling", self.sessions_dir)
        if not self._stop.is_set():
            self.kind = "poll"
            self._wake.set()
