"""The store and memory an import takes for a Claude Code file rewound at every turn, and
for a pi file branched at every turn.

Each rewind is a branch sharing the turns before it: a store that copies every branch's
start holds the file's turns squared, and an import that builds every branch at once holds
them squared in memory. The figures: the store's bytes against the source's, and the peak
resident memory of the real import process (`forkwise sessions import`) against that of
a process that only decodes every line of the source (the floor of reading it at all).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from forkwise.core.bench import process_env
from forkwise.core.bench.figures import Figure
from forkwise.core.bench.synth_sources import claude_rewound, pi_rewound

#: the peak RSS of the process that runs argv (its wrapper's only child), in KB
_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "if done.returncode: sys.exit(done.returncode)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
_DECODE = (
    "import orjson, sys\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "entries = [orjson.loads(line) for line in data.splitlines()]\n"
)


def peak_rss(argv: list[str]) -> int:
    """Bytes: the peak resident memory of a fresh process running `argv`."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *argv],
        capture_output=True,
        text=True,
        env=process_env(),
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"a measured process failed ({done.returncode}):\n{done.stderr}")
    return int(done.stdout.split()[-1]) * 1024


def bench_rewinds(tmp: Path, rewinds: int) -> list[Figure]:
    """The figures for a Claude Code file rewound at every turn (`rewinds-…`) and a pi
    file branched at every turn (`rewinds-pi-…`)."""
    claude = claude_rewound(tmp / "rewound", rewinds)
    pi = pi_rewound(tmp / "branched", rewinds)
    return [
        *_figures(tmp, "claude", claude, "rewinds", f"Claude Code file rewound at every turn "
                  f"({rewinds:,} rewinds)"),
        *_figures(tmp, "pi", pi, "rewinds-pi", f"pi file branched at every turn "
                  f"({rewinds:,} branches)"),
    ]  # fmt: skip


def _figures(tmp: Path, tool: str, source: Path, name: str, what: str) -> list[Figure]:
    store = tmp / f"{name}-store"
    argv = [sys.executable, "-m", "forkwise.core.cli.main", "sessions", "import", "--from",
            tool, "--store", str(store), str(source.parents[1]), "--json"]  # fmt: skip
    peak = peak_rss(argv)
    floor = peak_rss([sys.executable, "-c", _DECODE, str(source)])
    stored = sum(p.stat().st_size for p in (store / "sessions").glob("*.jsonl"))
    size = source.stat().st_size
    load = f"a {size / 1e6:.1f} MB {what}"
    return [
        Figure(
            f"{name}-store",
            f"the store's session files after importing {load}",
            stored,
            size,
            "the source file",
            "<= 3x",
            unit="B",
        ),
        Figure(
            f"{name}-rss",
            f"peak RSS of `forkwise sessions import` of {load}",
            peak,
            floor,
            "a process that decodes every line of the source",
            "<= 300 MB",
            unit="B",
        ),
    ]
