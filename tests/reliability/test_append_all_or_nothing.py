"""An append of many events is all or nothing, like a first import: a writer process killed
with SIGKILL while its one write(2) of megabytes is part-way through leaves a log that
readers see as it was before the append (never the first half of the new turns), and the
next writer moves the cut bytes to `<store>/recovered/` and appends after the old end.
Real processes, a real store on disk, real SIGKILLs landed while the file grows."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env

SID = "grow"
TURNS = 400
TEXT = 64 * 1024  # bytes in each new user message: ~26 MB in one append
ROUNDS = 6

WRITER = """
import sys
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

store = SessionStore(JsonlBackend(sys.argv[1]))
store.get(sys.argv[2])
big = "y" * int(sys.argv[4])
drafts = []
for t in range(int(sys.argv[3])):
    turn = f"new{t}"
    drafts += [
        {"type": "turn/start", "turn": turn},
        {"type": "message", "turn": turn, "id": f"user:{turn}", "role": "user",
         "parts": [{"type": "text", "text": big}]},
        {"type": "turn/end", "turn": turn, "status": "completed"},
    ]
print("ready", flush=True)
store.append(sys.argv[2], drafts)
print("done", flush=True)
"""


def seed_store(root: Path) -> int:
    """A store holding one session of two completed turns; its event count."""
    store = SessionStore(JsonlBackend(root))
    try:
        store.create(SID, cwd="/tmp")
        for t in range(2):
            turn = f"old{t}"
            store.append(SID, [
                {"type": "turn/start", "turn": turn},
                {"type": "message", "turn": turn, "id": f"user:{turn}", "role": "user",
                 "parts": [{"type": "text", "text": "question"}]},
                {"type": "turn/end", "turn": turn, "status": "completed"},
            ])  # fmt: skip
        return len(store.get(SID).events)
    finally:
        store.close()


def writer(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), SID, str(TURNS), str(TEXT)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env(),
    )  # fmt: skip


def full_size(root: Path, probe: Path) -> int:
    """The log's size once the append is whole: the writer run to its end on a copy."""
    shutil.copytree(root, probe)
    proc = writer(probe)
    out, _ = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0
    assert out.split() == ["ready", "done"]
    return (probe / "sessions" / f"{SID}.jsonl").stat().st_size


def kill_mid_write(root: Path, log: Path) -> int:
    """Start a writer of one large append and SIGKILL it as soon as the log grows; the
    log's size after the kill."""
    before = log.stat().st_size
    proc = writer(root)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + TIMEOUT
        while log.stat().st_size == before and time.monotonic() < deadline:
            pass  # a tight loop: the write takes tens of milliseconds
        proc.send_signal(signal.SIGKILL)
        proc.wait(TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
        assert proc.stdout is not None
        proc.stdout.close()
    return log.stat().st_size


def events_seen(root: Path, *, writable: bool) -> int:
    store = SessionStore(JsonlBackend(root, writable=writable))
    try:
        rows = store.list()
        assert [r.error for r in rows] == [None]
        return len(store.get(SID).events)
    finally:
        store.close()


def test_a_kill_inside_a_large_append_leaves_all_or_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    old = seed_store(root)
    log = root / "sessions" / f"{SID}.jsonl"
    whole = log.read_bytes()
    full = full_size(root, tmp_path / "probe")
    cut_short = 0
    for _ in range(ROUNDS):
        size = kill_mid_write(root, log)
        if size == len(whole):
            continue  # killed before the write began: nothing to see
        if size == full:  # the whole append reached the file before the kill: all there
            assert events_seen(root, writable=False) == old + 3 * TURNS
            break
        assert len(whole) < size < full
        cut_short += 1
        # a reader (no writer holds the store): the log as it was before the append
        assert events_seen(root, writable=False) == old
        assert log.stat().st_size == size  # reading changed nothing
        # the next writer: the cut bytes set aside, the log back to its old end
        assert events_seen(root, writable=True) == old
        assert log.read_bytes() == whole
        kept = sorted((root / "recovered").glob(f"{SID}.*.unfinished-append"))
        assert kept
        assert os.path.getsize(kept[-1]) == size - len(whole)
        assert not list((root / "sessions").glob(".*.appending"))
    assert cut_short, "no kill landed inside the write"
    # and the store goes on: an append after the old end reads back whole
    store = SessionStore(JsonlBackend(root))
    try:
        store.append(SID, [{"type": "turn/start", "turn": "after"},
                           {"type": "turn/end", "turn": "after", "status": "completed"}])
        assert len(store.get(SID).events) in (old + 2, old + 3 * TURNS + 2)
    finally:
        store.close()
    print(f"\nappend kills: {cut_short} of {ROUNDS} landed inside the write")


def test_a_finished_append_s_note_never_cuts_a_log_made_shorter(tmp_path: Path) -> None:
    """The note of a finished append stays until the writer closes; a log truncated into
    the range it names must not be read as an unfinished append."""
    root = tmp_path / "store"
    writer = SessionStore(JsonlBackend(root))
    try:
        writer.create(SID, cwd="/tmp")
        turns = []
        for t in range(6):
            turn = f"t{t}"
            turns += [{"type": "turn/start", "turn": turn},
                      {"type": "turn/end", "turn": turn, "status": "completed"}]  # fmt: skip
        writer.append(SID, turns[:2])
        writer.append(SID, turns[2:])  # its note: from 2 events' size to 12 events'
        assert list((root / "sessions").glob(".*.appending"))
        writer.truncate(SID, 6)  # inside that range
        reader = SessionStore(JsonlBackend(root, writable=False))
        try:
            assert len(reader.get(SID).events) == 6
        finally:
            reader.close()
    finally:
        writer.close()
    assert not list((root / "sessions").glob(".*.appending"))


def claude_transcript(exchanges: int) -> Any:
    from tests.formats.claude_fixtures import Transcript  # the Claude Code file's shape

    t = Transcript("5d1f3a2e-8c4b-4f6a-9e7d-0a1b2c3d4e5f")
    for k in range(exchanges):
        t.exchange(f"question {k} " + "q" * 200, f"answer {k} " + "a" * 400)
    return t


def test_a_kill_inside_an_import_s_append_to_a_grown_source_leaves_all_or_nothing(
    tmp_path: Path,
) -> None:
    """The item as it was found: `sessions import` of a Claude Code file that grew by
    thousands of turns, killed while it appends them (before: 10,575 of ~25,000 events
    visible, ending inside a turn)."""
    from tests.formats.claude_fixtures import project_file

    small, grown = claude_transcript(200), claude_transcript(6000)
    source = small.write(project_file(tmp_path / "claude", small))
    os.utime(source, (1_700_000_000, 1_700_000_000))
    root = tmp_path / "store"
    argv = [FORKWISE, "sessions", "import", str(source), "--from", "claude", "--store", str(root),
            "--json"]  # fmt: skip
    first = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, env=child_env(), check=False)
    assert first.returncode == 0, first.stderr
    [log] = (root / "sessions").glob("*.jsonl")
    sid = log.name[: -len(".jsonl")]

    def seen(writable: bool) -> int:
        store = SessionStore(JsonlBackend(root, writable=writable))
        try:
            return len(store.get(sid).events)
        finally:
            store.close()

    old, whole = seen(False), log.read_bytes()
    grown.write(source)
    os.utime(source, (1_700_000_100, 1_700_000_100))
    landed, rounds = 0, []
    for _ in range(4):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=child_env())  # fmt: skip
        deadline = time.monotonic() + TIMEOUT
        while log.stat().st_size == len(whole) and proc.poll() is None:
            assert time.monotonic() < deadline
        proc.send_signal(signal.SIGKILL)
        proc.wait(TIMEOUT)
        if proc.returncode == 0:
            break  # the import finished first
        size = log.stat().st_size
        # a reader, then the next writer: the old log, or (the write was whole before
        # the kill, under a loaded machine) the new one; never a part
        rounds.append((seen(False), seen(True)))
        if rounds[-1] == (old, old):
            landed += size > len(whole)
            assert log.read_bytes() == whole  # cut back to its old end
        else:  # the grown log is in: put the old one back for the next round
            log.write_bytes(whole)
    assert landed, f"no kill landed inside the append: {rounds}"
    done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, env=child_env(), check=False)
    assert done.returncode == 0, done.stderr
    full = seen(False)
    assert full > old
    assert all(r in ((old, old), (full, full)) for r in rounds), (old, full, rounds)
