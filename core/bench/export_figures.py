"""The document export's figure: a large Claude Code session (~9 MB, ~3,000 lines) written
as one HTML file, against orjson-parsing its source file, measured in the same run."""

from __future__ import annotations

import io
import random
import statistics
import time
from pathlib import Path

import orjson

from forkwise.core.bench.synth_sources import _ClaudeFile


def large_claude_session(folder: Path, megabytes: float = 9.0, seed: int = 31) -> Path:
    """One session file of `megabytes` MB, written the way Claude Code writes one (reads,
    shell output, edits with their structuredPatch, searches, thinking)."""
    f = _ClaudeFile(1, random.Random(seed))
    size, turn = 0, 0
    while size < megabytes * 1_000_000:
        turn += 1
        before = len(f.lines)
        f.turn(turn)
        size += sum(len(line) + 1 for line in f.lines[before:])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{f.sid}.jsonl"
    path.write_bytes(b"\n".join(f.lines) + b"\n")
    return path


def parse_file(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds to read the file and decode every line."""
    start, cpu = time.perf_counter(), time.process_time()
    for line in path.read_bytes().splitlines():
        orjson.loads(line)
    return time.perf_counter() - start, time.process_time() - cpu


Timed = tuple[float, float]  # (wall, CPU) seconds


def run_export(
    tmp: Path, repeat: int, megabytes: float = 9.0
) -> tuple[dict[str, Timed], Timed, int, int]:
    """({"html": export, "markdown": export}, parse, file bytes, lines): medians of `repeat`
    runs each, taken in turn, in wall and CPU seconds (a loaded machine inflates the
    first). The export is the verb's own function on a store holding the imported session:
    the log read, folded, rendered and the file written."""
    from forkwise.core.cli import main as cli
    from forkwise.core.host.documents import export_document
    from forkwise.core.reading.markup import forget_highlighted
    from forkwise.core.store.backends.jsonl import JsonlBackend
    from forkwise.core.store.session_store import SessionStore

    source = large_claude_session(tmp / "export-source" / "projects" / "-home-dev-project1",
                                  megabytes)
    store_dir = tmp / "export-store"
    out, err = io.StringIO(), io.StringIO()
    if cli.main(["sessions", "import", "--from", "claude", str(source), "--store",
                 str(store_dir), "--json"], out=out, err=err) != 0:
        raise RuntimeError(f"the import failed: {out.getvalue()}{err.getvalue()}")
    (sid,) = orjson.loads(out.getvalue())["imported"]
    store = SessionStore(JsonlBackend(store_dir, writable=False))
    ours: dict[str, list[Timed]] = {"html": [], "markdown": []}
    base: list[Timed] = []
    try:
        for n in range(repeat):
            base.append(parse_file(source))
            for kind, runs in ours.items():
                forget_highlighted()  # each run as cold as the first: no code seen yet
                start, cpu = time.perf_counter(), time.process_time()
                export_document(store, sid, kind, str(tmp / f"export-{n}.{kind}"))
                runs.append((time.perf_counter() - start, time.process_time() - cpu))
    finally:
        store.close()
    data = source.read_bytes()
    medians = {kind: _median(runs) for kind, runs in ours.items()}
    return medians, _median(base), len(data), data.count(b"\n")


def _median(runs: list[Timed]) -> Timed:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
