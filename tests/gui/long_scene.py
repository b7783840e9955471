"""A long Forkwise session, written straight to the store."""

from __future__ import annotations

import random
from pathlib import Path

from forkwise.core.bench.synth import session_lines

LONG = "long-session"


def write_long(root: Path, events: int) -> None:
    sessions = root / "store" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    lines = session_lines(random.Random(5), LONG, events)
    (sessions / f"{LONG}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
