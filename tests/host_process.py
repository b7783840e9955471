"""A real `forkwise host` process listening on TCP on 127.0.0.1, for tests that reach it
the way a remote client does."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TIMEOUT = 10.0


@contextmanager
def tcp_host(
    store: Path, token: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The host process on `store` with the token in `token` (and the environment `env`,
    this one's when None), and the address it printed; stopped with SIGTERM (as a service
    manager stops it) when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "forkwise.core.cli", "host", "--store", str(store),
         "--listen", "tcp:127.0.0.1:0", "--token-file", str(token)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        address = proc.stdout.readline().split()[-1]
        assert address.startswith("tcp:127.0.0.1:"), address
        yield proc, address
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
