"""A read command refreshes the store's caches (its summary index, a replay checkpoint)
while no process holds the writer lock, and never touches a session file; while another
process holds the lock it reads without writing anything."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import orjson

from forkwise.core.bench.synth import session_lines

#: runs one CLI command in a fresh process, and writes to argv[1] the session files it
#: opened, as the interpreter's audit hook saw them (every open(2) of Python goes there)
AUDITED = """
import sys, orjson
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and "/sessions/" in args[0]:
        opened.append(args[0])
sys.addaudithook(hook)
from forkwise.core.cli import main as cli
out = open(sys.argv[2], "w")
code = cli.main(sys.argv[3:], out=out)
out.close()
open(sys.argv[1], "wb").write(orjson.dumps(opened))
sys.exit(code)
"""

#: holds the store's writer lock until its stdin closes
HOLDER = """
import sys
from pathlib import Path
from forkwise.core.store.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1]) / "writer.lock")
assert lock.acquire()
print("held", flush=True)
sys.stdin.read()
lock.release()
"""


def hand_written(root: Path, sessions: int, events: int) -> Path:
    """A store whose files a script wrote: no index, no lock file, no checkpoint."""
    rng = random.Random(3)
    folder = root / "sessions"
    folder.mkdir(parents=True)
    for i in range(sessions):
        sid = f"hand-{i:03d}"
        (folder / f"{sid}.jsonl").write_bytes(b"\n".join(session_lines(rng, sid, events)) + b"\n")
    return root


def files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Each session file's bytes and mtime."""
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (root / "sessions").iterdir()
    }


def run(tmp: Path, root: Path, *args: str) -> tuple[list[str], str]:
    """The session files a CLI command opened, and what it printed."""
    opened, out = tmp / "opened.json", tmp / "out.txt"
    done = subprocess.run(
        [sys.executable, "-c", AUDITED, str(opened), str(out), *args, "--store", str(root)],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return orjson.loads(opened.read_bytes()), out.read_text()


def test_a_second_listing_of_a_hand_written_store_opens_no_session_file(
    tmp_path: Path,
) -> None:
    root = hand_written(tmp_path / "store", 6, 40)
    before = files(root)
    # the table: `--json` adds each row's usage, which reads every log
    opened, first = run(tmp_path, root, "sessions", "list")
    assert len(set(opened)) == 6  # the first reads every log
    assert (root / "index.json").exists()
    opened, second = run(tmp_path, root, "sessions", "list")
    assert opened == []  # the index the first one wrote vouches for every log
    assert second == first
    assert all(f"hand-{i:03d}" in first for i in range(6))
    assert files(root) == before  # no session file was touched


def test_a_store_whose_lock_another_process_holds_is_listed_without_writing(
    tmp_path: Path,
) -> None:
    root = hand_written(tmp_path / "store", 4, 30)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        names = sorted(p.name for p in root.rglob("*"))
        before = files(root)
        for _ in range(2):
            opened, listed = run(tmp_path, root, "sessions", "list", "--json")
            assert sorted(row["id"] for row in orjson.loads(listed)) == [
                f"hand-{i:03d}" for i in range(4)
            ]
            opened, _ = run(tmp_path, root, "sessions", "list")
            assert len(set(opened)) == 4  # read again: nothing was cached
        assert sorted(p.name for p in root.rglob("*")) == names  # nothing written
        assert files(root) == before
    finally:
        assert holder.stdin is not None
        assert holder.stdout is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    run(tmp_path, root, "sessions", "list")
    assert (root / "index.json").exists()  # once free, the reader writes it


def test_context_of_an_unindexed_long_session_leaves_its_checkpoint(tmp_path: Path) -> None:
    root = hand_written(tmp_path / "store", 1, 12_000)  # past replay_cache.MIN_EVENTS
    before = files(root)
    _, first = run(tmp_path, root, "sessions", "context", "hand-000", "--json")
    assert (root / "replay" / "hand-000.json").exists()
    assert (root / "index-log.json").exists()  # the log's facts: its next load checks none
    checkpoint = (root / "replay" / "hand-000.json").stat().st_mtime_ns
    _, second = run(tmp_path, root, "sessions", "context", "hand-000", "--json")
    assert second == first
    assert (root / "replay" / "hand-000.json").stat().st_mtime_ns == checkpoint  # taken
    assert files(root) == before
    assert os.stat(root / "writer.lock").st_size == 0  # let go of
