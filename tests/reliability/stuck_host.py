"""A `forkwise host` process with one thread stuck in a system call no Python code can
interrupt (an `open()` of a FIFO nobody writes to), as a tool thread was in issue 18:
argv is STORE SOCKET FIFO GRACE."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from forkwise.core.cli.serve import run_host


def main() -> int:
    store, sock, fifo, grace = sys.argv[1:5]
    stuck = threading.Thread(target=os.open, args=(fifo, os.O_RDONLY), name="stuck-in-open")
    stuck.start()  # not a daemon: the interpreter would wait for it at exit
    args = argparse.Namespace(
        store=store, token_file=None, listen=f"unix:{sock}", allow_remote=False
    )
    return run_host(args, sys.stdout, grace=float(grace))


if __name__ == "__main__":
    sys.exit(main())
