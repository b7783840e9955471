"""Issue 18: kill -9 during `sessions import` of a large tree. After every kill each
session in the store is whole (byte for byte its source) or absent, the store opens and
lists without errors, and a later import completes and then finds nothing left to do.
Real `forkwise` processes, real files, real SIGKILLs."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import orjson

from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env

FILES = 600
KILLS = int(os.environ.get("FORKWISE_IMPORT_KILLS", "12"))


def make_tree(root: Path) -> dict[str, bytes]:
    """FILES Forkwise session files in nested folders; id → the file's bytes."""
    out: dict[str, bytes] = {}
    for n in range(FILES):
        sid = f"imp-{n:04d}"
        header = {"type": "session", "version": 1, "id": sid, "created": "2026-01-01T00:00:00Z",
                  "cwd": "/tmp", "parentSession": None, "seedLength": 0,
                  "meta": {"n": 10**18 + n}}  # fmt: skip
        lines = [orjson.dumps(header)]
        seq = 0
        for t in range(6):
            turn = f"turn:{n}:{t}"
            for record in (
                {"type": "turn/start", "turn": turn},
                {"type": "message", "turn": turn, "id": f"user:{n}:{t}", "role": "user",
                 "parts": [{"type": "text", "text": f"question {t} " + "x" * 200}]},
                {"type": "message", "turn": turn, "id": f"assistant:{n}:{t}",
                 "role": "assistant", "parts": [{"type": "text", "text": "answer " * 40}]},
                {"type": "turn/end", "turn": turn, "status": "completed"},
            ):  # fmt: skip
                seq += 1
                lines.append(orjson.dumps({"seq": seq, "ts": "2026-01-01T00:00:01Z", **record}))
        data = b"\n".join(lines) + b"\n"
        folder = root / f"group-{n % 7}" / f"sub-{n % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sid}.jsonl").write_bytes(data)
        out[sid] = data
    return out


def check_whole_or_absent(store: Path, sources: dict[str, bytes]) -> int:
    sessions = store / "sessions"
    present = sorted(p.name for p in sessions.iterdir()) if sessions.exists() else []
    whole = 0
    for name in present:
        if name.startswith("."):
            continue  # a temp file a kill left: never a session, swept by the next writer
        sid = name[: -len(".jsonl")]
        assert (sessions / name).read_bytes() == sources[sid], sid
        whole += 1
    if sessions.exists():
        opened = SessionStore(JsonlBackend(store, writable=False))
        try:
            rows = opened.list()
            assert all(r.error is None for r in rows), [r for r in rows if r.error]
            assert len(rows) == whole
        finally:
            opened.close()
    return whole


def forkwise_import(source: Path, store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FORKWISE, "sessions", "import", str(source), "--from", "forkwise", "--store",
         str(store), "--json"],
        capture_output=True, text=True, timeout=TIMEOUT * 3, env=child_env(), check=False,
    )  # fmt: skip


def test_kill_9_during_a_large_import_leaves_sessions_whole_or_absent(tmp_path: Path) -> None:
    rng = random.Random(20261203)
    source, store = tmp_path / "source", tmp_path / "store"
    sources = make_tree(source)
    counts = []
    for round_no in range(KILLS):
        if round_no % 2 == 0:  # half the rounds start over, half go on from the kill
            shutil.rmtree(store, ignore_errors=True)
        proc = subprocess.Popen(
            [FORKWISE, "sessions", "import", str(source), "--from", "forkwise", "--store",
             str(store), "--json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(),
        )  # fmt: skip
        time.sleep(0.25 + rng.random() * 1.0)  # start-up ~0.25 s, the import ~1.2 s
        proc.send_signal(signal.SIGKILL)
        proc.wait(TIMEOUT)
        counts.append(check_whole_or_absent(store, sources))
    done = forkwise_import(source, store)
    assert done.returncode == 0, done.stdout + done.stderr
    report = orjson.loads(done.stdout)
    assert report["failed"] == [], report["failed"]
    assert check_whole_or_absent(store, sources) == FILES
    again = orjson.loads(forkwise_import(source, store).stdout)
    assert again["imported"] == [], again
    assert len(again["unchanged"]) == FILES
    assert any(0 < c < FILES for c in counts), counts  # some kills landed mid-import
    print(f"\nimport crash: sessions whole after each of {KILLS} kills: {counts}")
