"""The import figures: importing agents' sessions costs about what parsing them
does, and re-importing an unchanged tree about a `stat` per file.

`import` and `import-codex` run `forkwise sessions import` in a fresh process into an empty
store, against a fresh process that reads the same files and decodes every line with orjson;
both in wall time and (`import-cpu`, `import-codex-cpu`) in CPU seconds of the process,
which the neighbours on a shared machine do not inflate. An import reads its files in
worker processes beside its own (`host/import_ahead.py`) when it may run on more than one
core, and the CPU seconds count theirs too: a second core shortens the wall time, never the
CPU figure (the parse baseline is one process). `import-durable-cpu` and
`import-codex-durable-cpu` put the same CPU seconds against a bare script that also encodes
one event a line and writes every file durably (`import_floor`'s write level): the parse
baseline writes nothing, so they show what the import costs beyond storing the bytes at all;
`import-floor` and `import-codex-floor` give that durable copy's wall time against the parse:
the floor beside the import's own ratio.
`reimport` runs the verb as the
host does (finding the files, then `import_sources` with the ledger read from disk, on a
freshly opened store) against walking the tree and stat'ing every file; `reimport-cli` is
the same through the command line in fresh processes. Repeats alternate between ours and
the baseline.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from forkwise.core.bench import import_floor
from forkwise.core.bench.figures import run_quietly
from forkwise.core.bench.synth_agents import gemini_home, opencode_db
from forkwise.core.bench.synth_sources import claude_projects, codex_home

IMPORT_SNIPPET = """
import sys
from forkwise.core.cli import main as cli
code = cli.main(["sessions", "import", "--from", sys.argv[1], sys.argv[2], "--store", sys.argv[3],
                 "--json"], out=open("/dev/null", "w"))
sys.exit(code)
"""
PARSE_SNIPPET = """
import os, sys
import orjson
loads = orjson.loads
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), "rb") as fh:
                for raw in fh.read().split(b"\\n"):
                    if raw:
                        loads(raw)
"""
#: an OpenCode database read as its own reader must at least: every row, its JSON decoded
DB_PARSE_SNIPPET = """
import sqlite3, sys
import orjson
loads = orjson.loads
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for table in ("session", "message", "part"):
    for row in db.execute("SELECT * FROM " + table):
        for value in row:
            if isinstance(value, str) and value[:1] == "{":
                loads(value)
"""
STAT_SNIPPET = """
import os, sys
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        os.stat(os.path.join(folder, name))
"""

Timed = tuple[float, float]  # wall seconds, CPU seconds
#: the level of `import_floor.SCRIPT` that decodes every line, encodes one event a line and
#: writes each file durably (temporary name, fsync, link, folder fsync): what any import that
#: stores its sessions must do at least, without mapping or checking anything
DURABLE_LEVEL = import_floor.LEVELS.index("+ write, fsync")


def run_process(snippet: str, *args: str) -> Timed:
    """Wall and CPU (user + system) seconds of a fresh Python process running `snippet`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run_quietly(snippet, *args)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def interleaved(*sides: Callable[[], Timed], repeat: int) -> list[Timed]:
    """Medians of (wall, CPU) of each side, the sides run in turn `repeat` times."""
    runs: list[list[Timed]] = [[] for _ in sides]
    for _ in range(repeat):
        for side, took in zip(sides, runs, strict=True):
            took.append(side())
    return [(statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for r in runs]


def tree_size(files: list[Path]) -> tuple[int, int]:
    """Bytes and lines of `files`."""
    size = lines = 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        lines += data.count(b"\n")
    return size, lines


def measure_import(tmp: Path, tool: str, source: Path, repeat: int) -> list[Timed]:
    """(the import, the parse baseline, the durable-copy baseline), each (wall, CPU)."""
    store, copy = tmp / f"import-{tool}-store", tmp / f"import-{tool}-copy"

    def ours() -> Timed:
        shutil.rmtree(store, ignore_errors=True)  # every run imports into an empty store
        return run_process(IMPORT_SNIPPET, tool, str(source), str(store))

    def durable() -> Timed:
        shutil.rmtree(copy, ignore_errors=True)
        return run_process(import_floor.SCRIPT, str(source), str(copy), str(DURABLE_LEVEL))

    baseline = DB_PARSE_SNIPPET if source.suffix == ".db" else PARSE_SNIPPET
    parse = lambda: run_process(baseline, str(source))  # noqa: E731
    took = interleaved(ours, parse, durable, repeat=repeat)
    shutil.rmtree(store, ignore_errors=True)
    shutil.rmtree(copy, ignore_errors=True)
    return took


def claude_tree(tmp: Path, megabytes: float) -> tuple[Path, list[Path]]:
    root = tmp / "claude-home"
    return root, claude_projects(root, megabytes=megabytes)


def codex_tree(tmp: Path, megabytes: float) -> tuple[Path, list[Path]]:
    root = tmp / "codex-home"
    codex_home(root, megabytes)
    return root, sorted((root / "sessions").rglob("*.jsonl"))


def gemini_tree(tmp: Path, megabytes: float) -> tuple[Path, list[Path]]:
    root = tmp / "gemini-home"
    return root / ".gemini" / "tmp", gemini_home(root, megabytes)


def opencode_tree(tmp: Path, megabytes: float) -> tuple[Path, list[Path]]:
    db = tmp / "opencode-data" / "opencode" / "opencode.db"
    opencode_db(db, megabytes)
    return db, [db]


def measure_reimport_of(tool: str, source: Path, store_dir: Path, repeat: int) -> list[Timed]:
    """(the verb on a source imported before and unchanged since, walking the tool's folder
    and stat'ing every file in it), in process as the host runs it."""
    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.importing import discover, import_sources
    from forkwise.core.store.backends.jsonl import JsonlBackend
    from forkwise.core.store.session_store import SessionStore

    folder = source if source.is_dir() else source.parent
    first = run_process(IMPORT_SNIPPET, tool, str(source), str(store_dir))
    assert first[0] > 0

    def verb() -> Timed:
        store = SessionStore(JsonlBackend(store_dir))
        start, cpu = time.perf_counter(), time.process_time()
        report = import_sources(
            store, discover(tool, [source], dict(os.environ), Path.home()),
            ImportLedger(store_dir / "imports.json"),
        )
        took = time.perf_counter() - start, time.process_time() - cpu
        store.close()
        assert not report.failed, report.failed
        assert report.imported == report.updated == []
        return took

    def stat() -> Timed:
        start, cpu = time.perf_counter(), time.process_time()
        for parent, _, names in os.walk(folder):
            for name in names:
                os.stat(os.path.join(parent, name))
        return time.perf_counter() - start, time.process_time() - cpu

    return interleaved(verb, stat, repeat=repeat)


def measure_reimport(tmp: Path, files: int, repeat: int) -> tuple[list[Timed], list[Timed]]:
    """(in process: verb, walk + stat), (fresh processes: CLI, walk + stat)."""
    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.importing import discover, import_sources
    from forkwise.core.store.backends.jsonl import JsonlBackend
    from forkwise.core.store.session_store import SessionStore

    source = tmp / "reimport-home"
    claude_projects(source, sessions=files, turns=2, seed=9)
    store_dir = tmp / "reimport-store"
    first = run_process(IMPORT_SNIPPET, "claude", str(source), str(store_dir))
    assert first[0] > 0
    ledger_file = store_dir / "imports.json"
    assert ledger_file.exists(), "the import wrote no ledger"

    def verb() -> Timed:
        store = SessionStore(JsonlBackend(store_dir))
        start, cpu = time.perf_counter(), time.process_time()
        found = discover("claude", [source], dict(os.environ), Path.home())
        report = import_sources(store, found, ImportLedger(ledger_file))
        took = time.perf_counter() - start, time.process_time() - cpu
        store.close()
        assert not report.failed, report.failed
        assert report.imported == report.updated == []
        return took

    def walk() -> Timed:
        start, cpu = time.perf_counter(), time.process_time()
        for folder, _, names in os.walk(source):
            for name in names:
                os.stat(os.path.join(folder, name))
        return time.perf_counter() - start, time.process_time() - cpu

    inproc = interleaved(verb, walk, repeat=repeat)
    cli = interleaved(
        lambda: run_process(IMPORT_SNIPPET, "claude", str(source), str(store_dir)),
        lambda: run_process(STAT_SNIPPET, str(source)),
        repeat=repeat,
    )
    return inproc, cli
