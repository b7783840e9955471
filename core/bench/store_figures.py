"""Store figures: list, fork, open a long session and build its context, durable appends;
each against a baseline of plain file work measured in the same run."""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from forkwise.core.bench import CHECKPOINT_SNIPPET
from forkwise.core.bench.figures import Figure, median, process
from forkwise.core.bench.synth import session_lines, write_store
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

LIST_SNIPPET = """
import sys
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
store = SessionStore(JsonlBackend(sys.argv[1]))
rows = store.list()
store.close()
assert len(rows) == int(sys.argv[2]), len(rows)
"""
LIST_CLI_SNIPPET = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "list", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""
LIST_TABLE_SNIPPET = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "list", "--store", sys.argv[1]], out=open("/dev/null", "w")))
"""
FIRST_LINES_SNIPPET = """
import os, sys
n = 0
for entry in os.scandir(os.path.join(sys.argv[1], "sessions")):
    with open(entry.path, "rb") as fh:
        fh.readline()
    n += 1
assert n == int(sys.argv[2])
"""
FORK_SNIPPET = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "fork", "big", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""
COPY_SNIPPET = """
import os, sys, time
src = os.path.join(sys.argv[1], "sessions", "big.jsonl")
data = open(src, "rb").read()
dst = os.path.join(sys.argv[1], f"copy-{time.time_ns()}.jsonl")  # a new file, as a fork makes
fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, data); os.fsync(fd); os.close(fd)
"""

PARSE_SNIPPET = """
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as fh:
    for line in fh.read().split(b"\\n"):
        if line:
            loads(line)
"""
REPLAY_SNIPPET = """
import sys
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
store = SessionStore(JsonlBackend(sys.argv[1]))
assert store.get("big").replay().transcript
store.close()
"""
CONTEXT_SNIPPET = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "context", "big", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""


def bench_list(tmp: Path, sessions: int, per: int, repeat: int) -> list[Figure]:
    root = write_store(tmp / "list-store", sessions, per)
    n = str(sessions)

    def rebuild() -> float:
        _drop_index(root)
        return process(LIST_SNIPPET, str(root), n)

    cold = median(rebuild, repeat)  # one sample could not resolve a 10 % change here
    runs: dict[str, list[float]] = {"lib": [], "cli": [], "base": [], "first": [], "second": []}
    for _ in range(repeat):  # interleaved: a burst of load hits every side alike
        runs["base"].append(process(FIRST_LINES_SNIPPET, str(root), n))
        runs["lib"].append(process(LIST_SNIPPET, str(root), n))
        runs["cli"].append(process(LIST_CLI_SNIPPET, str(root)))
        # a store no writer indexed (hand-written, copied): a reader lists it twice
        _drop_index(root)
        runs["first"].append(process(LIST_TABLE_SNIPPET, str(root)))
        runs["second"].append(process(LIST_TABLE_SNIPPET, str(root)))
    warm, cli, base = (statistics.median(runs[k]) for k in ("lib", "cli", "base"))
    first, second = (statistics.median(runs[k]) for k in ("first", "second"))
    load = f"{sessions:,} sessions / {sessions * per:,} events, fresh process"
    return [
        Figure(
            "list",
            load + " (index warm)",
            warm,
            base,
            "read each file's first line",
            "<= 2x, < 1 s",
        ),
        Figure(
            "list-cli",
            load + " (index warm): sessions list --json, a host in the process",
            cli,
            base,
            "read each file's first line",
            "<= 2x",
        ),
        Figure(
            "list-unindexed-1st",
            load + " (no index, no writer): sessions list, read-only, leaves the index",
            first,
            base,
            "read each file's first line",
            "-",
        ),
        Figure(
            "list-unindexed-2nd",
            load + " (no writer ever indexed it): the second sessions list",
            second,
            base,
            "read each file's first line",
            "<= 2x",
        ),
        Figure(
            "list-rebuild",
            load + " (no index)",
            cold,
            base,
            "read each file's first line",
            "progress shown",
        ),
    ]


#: the files of a store's summary index: the summaries, and the log facts beside them
#: (store/backends/catalogue.py); a run "without the index" has neither
INDEX_FILES = ("index.json", "index-log.json")
#: a store's index as a writer left it: file name -> bytes
SavedIndex = dict[str, bytes]


def saved_index(root: Path) -> SavedIndex:
    return {n: (root / n).read_bytes() for n in INDEX_FILES if (root / n).exists()}


def put_index(root: Path, index: SavedIndex | None) -> None:
    """Put the index files back as `index` holds them (None: no index at all)."""
    for name in INDEX_FILES:
        (root / name).unlink(missing_ok=True)
    for name, data in (index or {}).items():
        (root / name).write_bytes(data)


def _drop_index(root: Path) -> None:
    put_index(root, None)


def bench_fork(tmp: Path, events: int, repeat: int) -> list[Figure]:
    root = tmp / "fork-store"
    (root / "sessions").mkdir(parents=True)
    rng = random.Random(11)
    data = b"\n".join(session_lines(rng, "big", events)) + b"\n"
    (root / "sessions" / "big.jsonl").write_bytes(data)

    def tidy(index: SavedIndex | None) -> None:
        """Between runs, outside the timing: remove what the previous run wrote, so that
        both sides always write a new file into the same amount of free space, and put
        the summary index back as it was (`index`; None: no index)."""
        for path in [
            *root.glob("copy-*"),
            *(root / "sessions").glob("*.jsonl"),
            *root.glob("trash/*"),
        ]:
            if path.name != "big.jsonl":
                path.unlink()
        put_index(root, index)

    def timed(snippet: str, index: SavedIndex | None = None) -> float:
        tidy(index)
        return process(snippet, str(root))

    # the index a store has once any Forkwise process has listed it (the app, the CLI)
    process(LIST_SNIPPET, str(root), "1")
    index = saved_index(root)
    runs: dict[str, list[float]] = {"index": [], "none": [], "base": []}
    for _ in range(repeat):  # interleaved: writing 48 MB swings 10-90 ms with the load
        runs["base"].append(timed(COPY_SNIPPET))
        runs["index"].append(timed(FORK_SNIPPET, index))
        runs["none"].append(timed(FORK_SNIPPET))
    warm_index, no_index, base = (statistics.median(runs[k]) for k in ("index", "none", "base"))
    tidy(None)
    mb = len(data) / 1e6
    load = f"{events:,}-event session ({mb:.0f} MB), fresh process, last completed turn"
    out = [
        Figure(
            "fork",
            load + " (index warm)",
            warm_index,
            base,
            "copy the file's bytes (fresh process)",
            "<= 2x",
        ),
        Figure(
            "fork-no-index",
            load + " (no index: every line checked)",
            no_index,
            base,
            "copy the file's bytes (fresh process)",
            "<= 2x",
        ),
    ]
    store = SessionStore(JsonlBackend(root))
    store.get("big")

    def warm_fork() -> float:
        start = time.perf_counter()
        child = store.fork("big")
        took = time.perf_counter() - start
        (root / "sessions" / f"{child.id}.jsonl").unlink()  # free the space again
        return took

    def warm_copy() -> float:
        dst = tmp / f"copy-{time.time_ns()}.jsonl"
        start = time.perf_counter()
        _copy_file(root / "sessions" / "big.jsonl", dst)
        took = time.perf_counter() - start
        dst.unlink()
        return took

    forks: list[float] = []
    copies: list[float] = []
    for _ in range(repeat):
        copies.append(warm_copy())
        forks.append(warm_fork())
    warm, copy = statistics.median(forks), statistics.median(copies)
    store.close()
    out.append(
        Figure(
            "fork-open",
            f"{events:,}-event session already open",
            warm,
            copy,
            "copy the file's bytes",
            "<= 2x",
        )
    )
    return out


def bench_context(tmp: Path, events: int, repeat: int) -> list[Figure]:
    """Open a long session and build what the model gets next, in a fresh process: through
    the library (`store.get(id).replay()`, every event folded) and through the CLI
    (`sessions context`, a host in the process), against decoding every line of the file.
    The CLI runs on the store as a writer leaves it (index and replay checkpoint made:
    the app or `forkwise host` replayed the session once), without the checkpoint, and
    with neither. Interleaved repeats: each round runs every side once, so a burst of
    load on the shared machine hits them alike."""
    root = tmp / "context-store"
    (root / "sessions").mkdir(parents=True)
    rng = random.Random(11)
    data = b"\n".join(session_lines(rng, "big", events)) + b"\n"
    path = root / "sessions" / "big.jsonl"
    path.write_bytes(data)
    process(CHECKPOINT_SNIPPET, str(root))  # a writer replays it: index and checkpoint
    index = saved_index(root)
    checkpoint = root / "replay" / "big.json"
    # none for a session shorter than replay_cache.MIN_EVENTS (--quick)
    kept = checkpoint.read_bytes() if checkpoint.exists() else None
    from forkwise.core.bench.host_figures import first_delta

    sides = ("parse", "lib", "cli", "bare", "cold", "second", "prompt", "prompt-fold")
    runs: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(repeat):
        runs["parse"].append(process(PARSE_SNIPPET, str(path)))
        runs["lib"].append(process(REPLAY_SNIPPET, str(root)))
        runs["cli"].append(process(CONTEXT_SNIPPET, str(root)))
        # each of the next runs is a reader's first (it leaves the caches it lacked)
        checkpoint.unlink(missing_ok=True)
        runs["bare"].append(process(CONTEXT_SNIPPET, str(root)))
        put_index(root, None)
        checkpoint.unlink(missing_ok=True)
        runs["cold"].append(process(CONTEXT_SNIPPET, str(root)))
        # a file no writer indexed, from the second run on: what the first one left
        runs["second"].append(process(CONTEXT_SNIPPET, str(root)))
        put_index(root, index)
        # a prompt appends a turn: each run starts from the same file again
        runs["prompt-fold"].append(first_delta(root))
        _restore(root, data, index, checkpoint, kept)
        runs["prompt"].append(first_delta(root))
        _restore(root, data, index, checkpoint, kept)
    med = {k: statistics.median(v) for k, v in runs.items()}
    load = f"{events:,}-event session ({len(data) / 1e6:.0f} MB), fresh process"
    base = "orjson-decode every line (fresh process)"
    cli = load + ": sessions context --json"
    return [
        Figure(
            "replay",
            load + ": store.get(id).replay(), every event folded",
            med["lib"],
            med["parse"],
            base,
            "<= 2x",
        ),
        Figure(
            "context",
            cli
            + (
                f" (index and replay checkpoint warm, {len(kept) / 1e6:.0f} MB)"
                if kept is not None
                else " (index warm; too short for a replay checkpoint)"
            ),
            med["cli"],
            med["parse"],
            base,
            "<= 2x",
        ),
        Figure(
            "first-delta",
            load
            + (", replay checkpoint warm" if kept is not None else ", too short for a checkpoint")
            + ": a host and client start, a prompt is sent, until its first streamed text",
            med["prompt"],
            med["parse"],
            base,
            "<= 2x",
        ),
        Figure(
            "first-delta-fold",
            load
            + ", no checkpoint: the same, every event folded"
            + " (the checkpoint is written after the turn)",
            med["prompt-fold"],
            med["parse"],
            base,
            "-",
        ),
        Figure(
            "context-fold",
            cli + " (index warm, no checkpoint: every event folded)",
            med["bare"],
            med["parse"],
            base,
            "-",
        ),
        Figure(
            "context-cold",
            cli + " (no index, no checkpoint: every line checked; leaves both)",
            med["cold"],
            med["parse"],
            base,
            "-",
        ),
        Figure(
            "context-unindexed-2nd",
            cli + " (no writer ever indexed it): the second run, on what the first left",
            med["second"],
            med["parse"],
            base,
            "<= 2x",
        ),
    ]


def _restore(
    root: Path, data: bytes, index: SavedIndex, checkpoint: Path, kept: bytes | None
) -> None:
    """Put the context store back as it was made: the log (with its modification time,
    which the index records), its index and checkpoint."""
    log = root / "sessions" / "big.jsonl"
    mtime = orjson.loads(index["index.json"])["sessions"]["big"]["mtime"]
    log.write_bytes(data)
    os.utime(log, ns=(mtime, mtime))
    put_index(root, index)
    checkpoint.unlink(missing_ok=True)
    if kept is not None:
        checkpoint.write_bytes(kept)


def _copy_file(src: Path, dst: Path) -> None:
    data = src.read_bytes()
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def bench_append(tmp: Path, turns: int, repeat: int) -> list[Figure]:
    """Durable appends of whole turns (one write + fsync per turn: group commit)."""

    def turn_drafts(t: int) -> list[dict[str, object]]:
        turn = f"turn:{t}"
        text = "an answer of moderate length " * 8
        return [
            {"type": "turn/start", "turn": turn},
            {
                "type": "message",
                "id": f"user:q:{t}",
                "role": "user",
                "turn": turn,
                "parts": [{"type": "text", "text": "a question"}],
            },
            {"type": "step/start", "turn": turn, "step": "s"},
            {
                "type": "message",
                "id": f"assistant:a:{t}",
                "role": "assistant",
                "turn": turn,
                "parts": [{"type": "text", "text": text}],
            },
            {"type": "step/end", "turn": turn, "step": "s"},
            {"type": "turn/end", "turn": turn, "status": "completed"},
        ]

    def ours() -> float:
        root = Path(tempfile.mkdtemp(dir=tmp))
        store = SessionStore(JsonlBackend(root))
        store.create("a")
        start = time.perf_counter()
        for t in range(1, turns + 1):
            store.append("a", turn_drafts(t))
        took = time.perf_counter() - start
        store.close()
        return took

    sample = [
        orjson.dumps({"seq": i, "ts": "2026-01-01T00:00:00.000Z", **d})
        for i, d in enumerate(turn_drafts(1), start=1)
    ]
    batch = b"\n".join(sample) + b"\n"

    def raw() -> float:
        fd = os.open(Path(tempfile.mkdtemp(dir=tmp)) / "raw.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
        start = time.perf_counter()
        for _ in range(turns):
            os.write(fd, batch)
            os.fsync(fd)
        took = time.perf_counter() - start
        os.close(fd)
        return took

    events = turns * 6
    t_ours, t_raw = median(ours, repeat), median(raw, repeat)
    return [
        Figure(
            "append",
            f"{turns:,} turns x 6 events, fsync per turn ({events / t_ours:,.0f} events/s)",
            t_ours,
            t_raw,
            f"raw write+fsync of the same bytes ({events / t_raw:,.0f} events/s)",
            ">= 20,000 events/s",
        )
    ]
