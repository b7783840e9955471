"""A figure of the benchmark suite, and how its runs are taken: each in a fresh process
(`process`), the median of several (`median`)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from forkwise.core.bench import process_env


@dataclass
class Figure:
    name: str
    workload: str
    ours: float
    baseline: float
    baseline_name: str
    target: str
    unit: str = "s"

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("inf")


def median(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def process(snippet: str, *args: str) -> float:
    start = time.perf_counter()
    run_quietly(snippet, *args)
    return time.perf_counter() - start


def run_quietly(snippet: str, *args: str) -> None:
    """Run `snippet` in a fresh Python process; what it says on stderr (progress, notes)
    is shown only when it fails."""
    argv = [sys.executable, "-c", snippet, *args]
    done = subprocess.run(argv, check=False, env=process_env(), stderr=subprocess.PIPE)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace")[-4000:]
        raise RuntimeError(f"a measured process failed ({done.returncode}):\n{said}")
