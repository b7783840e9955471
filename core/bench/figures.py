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
    subprocess.run([sys.executable, "-c", snippet, *args], check=True, env=process_env())
    return time.perf_counter() - start
