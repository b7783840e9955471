"""A store watcher that nothing disturbs sleeps: its threads make no wake-ups while the
folder is quiet (the kernel wakes them), and a change made after the quiet is still seen
at once, naming only that file."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until

from forkwise.core import inotify
from forkwise.core.store.watcher import StoreWatcher

WAIT = 20.0
QUIET = 1.0


def wakeups(native_id: int) -> int:
    """How many times the kernel has put this thread back to work after it slept."""
    with open(f"/proc/self/task/{native_id}/status") as fh:
        for line in fh:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("forkwise-")]


@pytest.mark.skipif(not inotify.available(), reason="no inotify here")
def test_a_quiet_store_is_not_looked_at_and_a_change_is_still_seen(tmp_path: Path) -> None:
    for n in range(20):
        (tmp_path / f"s{n}.jsonl").write_bytes(b"x\n")
    seen: list[Any] = []
    before = {t.ident for t in watcher_threads()}
    watcher = StoreWatcher(tmp_path, seen.append, poll=0.2, settle=0.2).start()
    try:
        assert watcher.kind == "inotify"
        time.sleep(0.5)  # past the settling look
        mine = [t for t in watcher_threads() if t.ident not in before]
        assert len(mine) == 2, [t.name for t in mine]  # the looker and the kernel's follower
        counts = {t.name: wakeups(t.native_id or 0) for t in mine}
        time.sleep(QUIET)
        woke = {t.name: wakeups(t.native_id or 0) - counts[t.name] for t in mine}
        assert woke == dict.fromkeys(counts, 0), woke
        assert seen == []
        with open(tmp_path / "s4.jsonl", "ab") as fh:
            fh.write(b"more\n")
        wait_until(lambda: any("s4" in c.changed for c in seen), WAIT, "s4 reported")
        assert [(c.added, c.changed, c.removed) for c in seen] == [(set(), {"s4"}, set())]
    finally:
        watcher.stop()
    assert not [t for t in watcher_threads() if t.ident not in before]
