"""Real processes on one store: helpers to start them, read their lines with a deadline,
and check what ended up on disk."""

from __future__ import annotations

import collections
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from forkwise.core.store.backends.jsonl import parse_log

TIMEOUT = 60.0
HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
FORKWISE = str(Path(sys.executable).with_name("forkwise"))


@pytest.fixture
def store() -> Iterator[Path]:
    """A store under a short path (its `host.sock` must fit a unix socket address)."""
    root = Path(tempfile.mkdtemp(prefix="fw-", dir="/tmp"))
    yield root / "store"
    shutil.rmtree(root, ignore_errors=True)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORKWISE_")}
    env.update(extra)
    return env


class Proc:
    """A subprocess with line-by-line stdout read against a deadline."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env or child_env(),
        )

    def line(self, timeout: float = TIMEOUT) -> str:
        out = self.popen.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        assert ready, f"{self.argv[:3]}: no output within {timeout} s"
        text = out.readline()
        assert text, f"{self.argv[:3]} ended: {self.stderr()}"
        return text.strip()

    def send(self, text: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(text + "\n")
        self.popen.stdin.flush()

    def finish(self, timeout: float = TIMEOUT) -> tuple[int, str, str]:
        """Close stdin, wait for the exit; returns (status, rest of stdout, stderr)."""
        out, err = self.popen.communicate(timeout=timeout)
        return self.popen.returncode, out, err

    def stderr(self) -> str:
        if self.popen.poll() is None:
            return "(still running)"
        assert self.popen.stderr is not None
        return self.popen.stderr.read()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.communicate(timeout=TIMEOUT)


def run(argv: Sequence[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), capture_output=True, text=True, timeout=TIMEOUT, env=env or child_env(),
        check=False,
    )


def user_texts(store: Path) -> collections.Counter[str]:
    """Every user message text in every session file, counted, after checking that each
    file loads with the real parser and every turn in it ended `completed`."""
    seen: collections.Counter[str] = collections.Counter()
    for path in sorted((store / "sessions").glob("*.jsonl")):
        loaded, _, tail = parse_log(path.read_bytes(), str(path))
        assert tail.torn is None, path
        assert [e.seq for e in loaded.events] == list(range(1, len(loaded.events) + 1))
        for event in loaded.events[loaded.header.seed_length :]:
            record: dict[str, Any] = event.to_record()
            if record["type"] == "turn/end":
                assert record["status"] == "completed", (path, record)
            if record["type"] == "message" and record["role"] == "user":
                seen.update(p["text"] for p in record["parts"] if p["type"] == "text")
    return seen
