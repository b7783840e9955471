"""Benchmarks: `python -m forkwise.core.bench [--quick] [--json]`.

Every figure is reported as a ratio against a baseline measured in the same run, because
the machine is shared and noisy; nothing here asserts a time.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: bytecode compiled by measured processes, kept between them as on a person's machine,
#: outside the checkout. A shell with PYTHONDONTWRITEBYTECODE=1 (as some sandboxes set)
#: would have every measured start compile the project's sources again, ~40 ms that the
#: baselines, which import little of the project, do not pay.
PYCACHE = Path(tempfile.gettempdir()) / "forkwise-bench-pycache"


def process_env(**extra: str) -> dict[str, str]:
    """The environment of a measured child process."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(PYCACHE), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env

#: a writer host replays session "big" of the store in argv[1], as the app does when the
#: session is opened and continued: it leaves the store's index and the session's replay
#: checkpoint (store/replay_cache.py) behind
CHECKPOINT_SNIPPET = """
import asyncio, sys
from forkwise.core.host.host import Host
async def main():
    host = Host.open(sys.argv[1])
    try:
        await host.context("big")
    finally:
        await host.close()
asyncio.run(main())
"""
