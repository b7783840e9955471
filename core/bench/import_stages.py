"""Where an import's time goes, per source line: `python -m forkwise.core.bench.import_stages
TOOL FOLDER` (TOOL: claude or codex; FOLDER: a Claude Code projects folder or a Codex home).

The figures `import` and `import-codex` say how far an import is from parsing the files;
this says which stage the distance is in. Each stage runs on its own over all the files, in
this process, the collector paused as an import pauses it; CPU seconds (user + system, every
thread, and the verb's worker processes), the best of three, per line of the files and as
a multiple of the parse:

- parse: read the files, decode every line (the figures' baseline);
- reader load: what the reader decodes and keeps of a file before it maps it;
- reader mapping: the reader's `read` less its load (the Forkwise events built);
- layout: the records numbered as the store takes them (`import_layout`);
- check + encode: `check_records`, each event encoded once and checked as the loader would;
- verb: `import_sources` into an empty store (all of the above, written and fsynced);
- rest: the verb less the stages (files written, fsynced and named, the store's own work).
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import orjson

from forkwise.core.formats.base import ImportedSession
from forkwise.core.host.import_layout import layout
from forkwise.core.host.import_ledger import ImportLedger
from forkwise.core.host.importing import discover, import_sources, reader
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.checked_log import check_records
from forkwise.core.store.session_store import SessionStore

Stage = tuple[str, float]


def cpu() -> float:
    """CPU seconds of this process and of the processes it waited for: the verb reads
    its files in worker processes too (`host/import_ahead.py`)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    forked = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + forked.ru_utime + forked.ru_stime


def best(run: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU time of `repeat` runs; what a run returns is dropped before the next."""
    took = []
    for _ in range(repeat):
        start = cpu()
        kept = run()
        took.append(cpu() - start)
        del kept
    return min(took)


def _loader(tool: str) -> Callable[[Path], object]:
    """What the reader of `tool` decodes and keeps of a file before mapping it."""
    if tool == "claude":
        from forkwise.core.formats.claude.tree import load

        return load
    from forkwise.core.formats.codex.reader import _File

    return _File


def stages(tool: str, root: Path) -> tuple[int, list[Stage]]:
    """The lines of the files under `root`, and each stage's CPU seconds."""
    files = [p for p, _ in discover(tool, [root], dict(os.environ), Path.home())]
    lines = sum(1 for p in files for raw in p.read_bytes().split(b"\n") if raw)
    source = reader(tool)

    def parse() -> None:
        for path in files:
            for raw in path.read_bytes().split(b"\n"):
                if raw:
                    orjson.loads(raw)

    def read_all() -> list[ImportedSession]:
        read = [s for path in files for s in source.read(path)]
        release = getattr(source, "release", None)
        if release is not None:
            release()
        return read

    load = _loader(tool)
    sessions = read_all()
    # every session laid out on its own (a branch as if it had no parent): what it costs
    # to number the records, not where a child's history joins its parent's
    store = SessionStore(MemoryBackend())
    laid = [layout(store, s, None) for s in sessions]

    def verb() -> float:
        folder = Path(tempfile.mkdtemp(prefix="forkwise-stages-"))
        try:
            into = SessionStore(JsonlBackend(folder))
            start = cpu()
            report = import_sources(into, [(p, tool) for p in files], ImportLedger(None))
            took = cpu() - start
            into.close()
            if report.failed:
                raise RuntimeError(f"the import failed: {report.failed[:3]}")
            return took
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    was = gc.isenabled()
    gc.disable()
    try:
        t_parse = best(parse)
        t_load = best(lambda: [load(p) for p in files])
        t_read = best(read_all)
        t_layout = best(lambda: [layout(store, s, None) for s in sessions])
        t_check = best(lambda: [check_records(h, r) for h, r in laid])
        t_verb = min(verb() for _ in range(3))
    finally:
        if was:
            gc.enable()
        store.close()
    known = t_read + t_layout + t_check
    return lines, [
        ("parse (orjson every line)", t_parse),
        ("reader load (decode, keep)", t_load),
        ("reader mapping", t_read - t_load),
        ("layout (records numbered)", t_layout),
        ("check + encode", t_check),
        ("verb (import_sources)", t_verb),
        ("rest (write, fsync, store)", t_verb - known),
    ]


def render(tool: str, lines: int, found: list[Stage]) -> str:
    parse = found[0][1] or float("inf")
    rows = [f"{tool}: {lines:,} lines; CPU per line, best of 3"]
    for name, took in found:
        rows.append(f"  {name:28s} {took / lines * 1e6:7.2f} us  {took / parse:5.2f}x parse")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("claude", "codex") or not Path(argv[1]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    lines, found = stages(argv[0], Path(argv[1]))
    if not lines:
        print(f"no {argv[0]} session lines under {argv[1]}", file=sys.stderr)
        return 1
    print(render(argv[0], lines, found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
