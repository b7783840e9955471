"""kill -9 during `sessions import` of a Codex home and of a Claude Code tree: the files an
import of another tool's sessions writes get their names only after their fsync (several
in flight at once, `backends/unnamed.py`). After every kill each session in the store is
byte for byte what an uninterrupted import stores, or absent; the store opens and lists
without errors; a later import completes, leaves no temporary file, and then finds
nothing left to do. Real `forkwise` processes, real files, real SIGKILLs."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_projects, codex_home
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env

KILLS = int(os.environ.get("FORKWISE_IMPORT_KILLS", "8"))


def run_import(tool: str, source: Path, store: Path) -> dict[str, object]:
    done = subprocess.run(
        [FORKWISE, "sessions", "import", str(source), "--from", tool, "--store", str(store),
         "--json"],
        capture_output=True, text=True, timeout=TIMEOUT * 3, env=child_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = orjson.loads(done.stdout)
    assert report["failed"] == [], report["failed"]
    return report


def stored(store: Path) -> dict[str, bytes]:
    sessions = store / "sessions"
    if not sessions.exists():
        return {}
    return {p.name: p.read_bytes() for p in sessions.iterdir() if not p.name.startswith(".")}


def check_whole_or_absent(store: Path, reference: dict[str, bytes]) -> int:
    present = stored(store)
    for name, data in present.items():
        assert data == reference[name], name
    if present:
        opened = SessionStore(JsonlBackend(store, writable=False))
        try:
            rows = opened.list()
            assert all(r.error is None for r in rows), [r for r in rows if r.error]
            assert len(rows) == len(present)
        finally:
            opened.close()
    return len(present)


def until_named(store: Path, proc: subprocess.Popen[bytes]) -> None:
    """Returns once the import has named a session in `store` (or ended)."""
    sessions = store / "sessions"
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        if sessions.exists() and any(not n.startswith(".") for n in os.listdir(sessions)):
            return
        time.sleep(0.001)


def make_source(tool: str, root: Path) -> Path:
    # more sessions than one batch of names (64): kills land between batches
    if tool == "codex":
        codex_home(root, 30)
    else:
        claude_projects(root, sessions=300, turns=2, seed=5)
    long_ago = time.time() - 86_400  # not a session being written now: read the same each time
    for folder, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(folder, name), (long_ago, long_ago))
    return root


@pytest.mark.parametrize("tool", ["codex", "claude"])
def test_kill_9_during_an_import_of_foreign_sessions_leaves_them_whole_or_absent(
    tmp_path: Path, tool: str
) -> None:
    rng = random.Random(20261204)
    source = make_source(tool, tmp_path / "source")
    reference_store, store = tmp_path / "reference", tmp_path / "store"
    started = time.perf_counter()
    run_import(tool, source, reference_store)
    took = time.perf_counter() - started
    reference = stored(reference_store)
    assert len(reference) > 20
    counts = []
    for round_no in range(KILLS):
        if round_no % 2 == 0:  # half the rounds start over, half go on from the kill
            shutil.rmtree(store, ignore_errors=True)
        proc = subprocess.Popen(
            [FORKWISE, "sessions", "import", str(source), "--from", tool, "--store", str(store),
             "--json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(),
        )  # fmt: skip
        if round_no % 2:  # at a random moment
            time.sleep(rng.uniform(0.3, 1.0) * took)
        else:  # just after the first sessions were named: mid-import on a busy machine too
            until_named(store, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(TIMEOUT)
        counts.append(check_whole_or_absent(store, reference))
    run_import(tool, source, store)
    assert check_whole_or_absent(store, reference) == len(reference)
    assert not [p.name for p in (store / "sessions").iterdir() if p.name.endswith(".tmp")]
    again = run_import(tool, source, store)
    assert again["imported"] == [], again
    assert again["updated"] == [], again
    assert any(0 < c < len(reference) for c in counts), counts  # some kills landed mid-import
    print(f"\n{tool} import crash: sessions whole after each of {KILLS} kills: {counts}")
