"""Following folder trees with the kernel's notifications (Linux inotify), so that a
watcher sleeps until something changes instead of looking every second or two.

libc's `inotify_init1` and `inotify_add_watch` are called through ctypes (no dependency;
`watchfiles` wakes every `step` milliseconds to look at its stop flag, while a thread
blocked in `poll` here costs nothing while nothing changes). The agents' folders (the
host) and a store's `sessions/` folder (the store) are both followed with it. A `TreeFollower`
watches every folder under its roots (new folders as they appear), and a folder that does
not exist yet through the nearest one above it that does. Its thread waits in `poll` on
the inotify descriptor and a pipe (to stop), gathers what one burst of writes changed
(`QUIET` seconds without a further event, `BURST` at most) and hands it on: the paths
named, or None when the whole trees must be looked at again (a new folder, a root that
appeared, an overflowed queue).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import select
import struct
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
_NONBLOCK = os.O_NONBLOCK
_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)
#: what a watched folder reports: its files written, made, moved, removed, touched
TREE_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
#: what a folder above a missing root reports: something made or moved in
ABOVE_MASK = IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded
#: seconds without a further event that end a burst, and the longest a burst is gathered
QUIET = 0.05
BURST = 0.5
#: folders watched at most (a tree larger than this is followed by polling instead)
MOST_FOLDERS = 20_000

Changed = Callable[[set[str] | None], None]


class Inotify:
    """One inotify instance: a non-blocking descriptor, watches added by path."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.fd: int = fd

    def add(self, path: str, mask: int) -> int:
        """A watch of `path` (a folder, with IN_ONLYDIR); its descriptor. Raises OSError
        (ENOENT, ENOTDIR; ENOSPC at the system's watch limit)."""
        wd = int(self._add(self.fd, os.fsencode(path), mask))
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
        return wd

    def remove(self, wd: int) -> None:
        self._rm(self.fd, wd)

    def read(self) -> list[tuple[int, int, str]]:
        """The events queued now: (watch descriptor, mask, name within the folder)."""
        out: list[tuple[int, int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                at += _EVENT.size
                name = data[at : at + size].split(b"\0", 1)[0]
                at += size
                out.append((wd, mask, os.fsdecode(name)))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def available() -> bool:
    """Whether this system has inotify (Linux)."""
    try:
        Inotify().close()
    except (OSError, AttributeError, TypeError):
        return False
    return True


class TreeFollower:
    """Watches the folder trees `roots` (but not the folders `pruned`, by absolute path;
    only the roots themselves when not `recursive`) and calls `changed(paths or None)` on
    its own thread (named `name`) after each burst of changes."""

    def __init__(
        self,
        roots: Sequence[Path],
        changed: Changed,
        pruned: Collection[str] = (),
        *,
        recursive: bool = True,
        name: str = "forkwise-sources",
    ) -> None:
        self.roots = [os.path.abspath(r) for r in roots]
        self.pruned = {os.path.abspath(p) for p in pruned}
        self._changed = changed
        self._recursive = recursive
        self._name = name
        self._ino = Inotify()
        self._dirs: dict[int, str] = {}  # watch descriptor -> folder
        self._above: dict[int, str] = {}  # watch descriptor -> folder above a missing root
        self._stop_r, self._stop_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._stopping = False
        #: the follower stopped on an error (the watch limit reached): its owner polls
        self.failed = False
        self._arm()

    # -- watches ------------------------------------------------------------------------

    def _arm(self) -> None:
        """Watch each root's tree, or the nearest folder above a missing root."""
        for root in self.roots:
            if os.path.isdir(root):
                self._tree(root)
            else:
                self._watch_above(root)

    def _tree(self, top: str) -> None:
        """Watch `top` and every folder under it (links not followed)."""
        stack = [top]
        while stack:
            folder = stack.pop()
            if folder in self.pruned:
                continue
            if len(self._dirs) >= MOST_FOLDERS:
                raise OSError(f"more than {MOST_FOLDERS} folders to watch")
            try:
                wd = self._ino.add(folder, TREE_MASK)
            except FileNotFoundError:
                continue
            except NotADirectoryError:
                continue
            self._dirs[wd] = folder
            if not self._recursive:
                continue
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                stack += [e.path for e in entries if e.is_dir(follow_symlinks=False)]

    def _watch_above(self, root: str) -> None:
        above = os.path.dirname(root)
        while above != os.path.dirname(above) and not os.path.isdir(above):
            above = os.path.dirname(above)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self._above[self._ino.add(above, ABOVE_MASK)] = above

    # -- the thread ---------------------------------------------------------------------

    def start(self) -> TreeFollower:
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._ino.close()
        for fd in (self._stop_r, self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        waiter = select.poll()
        waiter.register(self._ino.fd, select.POLLIN)
        waiter.register(self._stop_r, select.POLLIN)
        try:
            while not self._stopping:
                ready = waiter.poll()  # no timeout: asleep until the kernel or stop wakes it
                if self._stopping or any(fd == self._stop_r for fd, _ in ready):
                    return
                paths: set[str] | None = set()
                began = time.monotonic()
                while True:
                    paths = self._take(self._ino.read(), paths)
                    left = BURST - (time.monotonic() - began)
                    more = waiter.poll(int(min(QUIET, left) * 1000)) if left > 0 else []
                    if not more:
                        break
                    if any(fd == self._stop_r for fd, _ in more):
                        return
                if paths is None or paths:
                    self._changed(paths)
        except Exception as exc:  # the watch limit reached, a descriptor gone: the owner polls
            log.warning("following %s stopped (%s); polling", self.roots, exc)
            if not self._stopping:
                self.failed = True
                self._changed(None)

    def _take(self, events: list[tuple[int, int, str]], paths: set[str] | None) -> set[str] | None:
        """Fold a batch of events into what changed: None once the trees must be looked
        at whole (and new folders watched)."""
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                paths = None
                continue
            above = self._above.get(wd)
            if above is not None:
                if mask & IN_IGNORED:
                    del self._above[wd]
                    continue
                # a folder made on the way to a missing root: watch again from there
                made = os.path.join(above, name)
                if any(r == made or r.startswith(made + os.sep) for r in self.roots):
                    self._rearm()
                    paths = None
                continue
            folder = self._dirs.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:  # the folder went (removed, moved)
                del self._dirs[wd]
                if folder in self.roots:
                    self._watch_above(folder)
                continue
            if mask & IN_ISDIR:
                if self._recursive and mask & (IN_CREATE | IN_MOVED_TO):
                    self._tree(os.path.join(folder, name))  # and what is in it already
                    paths = None
                continue
            if paths is not None and name:
                paths.add(os.path.join(folder, name))
        return paths

    def _rearm(self) -> None:
        for wd in list(self._above):
            self._ino.remove(wd)
        self._above.clear()
        for root in self.roots:
            if os.path.isdir(root) and root not in self._dirs.values():
                self._tree(root)
            elif not os.path.isdir(root):
                self._watch_above(root)
