"""GUI figures: open transcript, cold start, tree — measured by `forkwise.gui.bench.perf`.

core/ never imports Qt, so each measurement runs `python -m forkwise.gui.bench.perf FIGURE` in a
process of its own (offscreen) and reads the one JSON line it prints. Without PySide6
(the Qt-free environment) the figures are skipped with a note. With `RAW_ENV` set to a
file, each measurement's line is appended to it as well (the smoke test reads them: one
run of the suite checks both the figures and what each process printed).
"""

from __future__ import annotations

import importlib.util
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.bench import process_env
from forkwise.core.bench.synth import session_lines, write_store
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

BIG, SMALL = "bench-big", "bench-small"
#: a file each measurement's JSON line is appended to, when set
RAW_ENV = "FORKWISE_BENCH_GUI_RAW"


def gui_missing() -> str:
    """Why the GUI figures cannot run here ("" when they can)."""
    missing = [m for m in ("PySide6", "qasync") if importlib.util.find_spec(m) is None]
    return f"{' and '.join(missing)} not importable" if missing else ""


def perf(figure: str, *args: str) -> dict[str, Any]:
    """One measurement: `python -m forkwise.gui.bench.perf FIGURE ARGS` in a fresh process."""
    return read_perf(start_perf(figure, *args))


def start_perf(figure: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`python -m forkwise.gui.bench.perf FIGURE ARGS` started (offscreen; `env`: more of
    its environment), to be read with `read_perf` (several may run at once)."""
    full = process_env(
        QT_QPA_PLATFORM="offscreen", QT_API="pyside6", QT_LOGGING_RULES="qt.qpa.*=false"
    )
    full.update(env or {})
    cmd = [sys.executable, "-m", "forkwise.gui.bench.perf", figure, *args]
    if figure.startswith("cold"):
        cmd += ["--t0", repr(time.monotonic())]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full
    )


def read_perf(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The JSON line a started measurement printed, once its process has exited, and
    `exited_at`: `time.monotonic()` when its exit was seen (the clock is system-wide)."""
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    exited_at = time.monotonic()
    lines = stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        cmd = proc.args if isinstance(proc.args, list) else []
        what = " ".join(str(a) for a in cmd[2:4])
        raise RuntimeError(f"{what} failed ({proc.returncode}): {stderr[-2000:]}")
    out: dict[str, Any] = orjson.loads(lines[-1])
    raw = os.environ.get(RAW_ENV)
    if raw:
        with open(raw, "ab") as fh:
            fh.write(lines[-1].encode() + b"\n")
    return out | {"exited_at": exited_at}


def write_open_store(root: Path, events: int) -> Path:
    """A `events`-event session and a small one that is newer (the window opens the newest
    row by itself; the figure then asks for the big one)."""
    sdir = root / "sessions"
    sdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    rng = random.Random(13)
    (sdir / f"{BIG}.jsonl").write_bytes(b"\n".join(session_lines(rng, BIG, events)) + b"\n")
    small = []
    for line in session_lines(rng, SMALL, 40):
        record = orjson.loads(line)
        if "ts" in record:
            record["ts"] = "2027" + record["ts"][4:]
        small.append(orjson.dumps(record))
    (sdir / f"{SMALL}.jsonl").write_bytes(b"\n".join(small) + b"\n")
    return root


def warm_index(root: Path) -> int:
    store = SessionStore(JsonlBackend(root))
    try:
        return len(store.list())
    finally:
        store.close()


def run_open(tmp: Path, events: int, repeat: int) -> list[dict[str, Any]]:
    root = write_open_store(tmp / "gui-open-store", events)
    warm_index(root)
    return [
        perf("open", "--store", str(root), "--session", BIG, "--other", SMALL)
        for _ in range(repeat)
    ]


def run_transcript(tmp: Path, megabytes: float, repeat: int) -> list[dict[str, Any]]:
    """A large Claude Code session (the export figure's) imported into a store beside a
    small newer session: opened from the small one until its first screen is painted,
    then scrolled page by page from its end."""
    import io

    from forkwise.core.bench.export_figures import large_claude_session
    from forkwise.core.cli import main as cli

    source = large_claude_session(tmp / "transcript-source" / "projects" / "-home-dev-p1",
                                  megabytes)
    root = tmp / "transcript-store"
    out, err = io.StringIO(), io.StringIO()
    if cli.main(["sessions", "import", "--from", "claude", str(source), "--store", str(root),
                 "--json"], out=out, err=err) != 0:
        raise RuntimeError(f"the import failed: {out.getvalue()}{err.getvalue()}")
    (big,) = orjson.loads(out.getvalue())["imported"]
    write_open_store(tmp / "transcript-small", 0)  # only its small session is wanted
    small = tmp / "transcript-small" / "sessions" / f"{SMALL}.jsonl"
    (root / "sessions" / small.name).write_bytes(small.read_bytes())
    warm_index(root)
    return [perf("transcript", "--store", str(root), "--session", big, "--other", SMALL)
            for _ in range(repeat)]


def run_cold_and_tree(
    tmp: Path, sessions: int, per: int, repeat: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    root = write_store(tmp / "gui-store", sessions, per)
    warm_index(root)
    perf("cold", "--store", str(root))  # a first run warms the page cache and the imports
    perf("cold-baseline")
    ours, base = [], []
    for _ in range(repeat):  # interleaved: noise on the machine hits both alike
        ours.append(perf("cold", "--store", str(root)))
        base.append(perf("cold-baseline"))
    trees = [perf("tree", "--store", str(root)) for _ in range(repeat)]
    return ours, base, trees


def median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in runs))
