"""`forkwise host`: serve a store headless, over a socket, until SIGINT/SIGTERM.

A stop always ends the process: once SIGINT/SIGTERM arrives, a watchdog gives the shutdown
`STOP_GRACE` seconds; work still stuck after that (a thread blocked in a system call, which
no Python code can interrupt) is abandoned and the process exits. What is on disk is safe
either way: the store survives a kill at any point (tests/core/test_crash.py), and the
writer lock, a flock, goes with the process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from contextlib import suppress
from typing import TextIO

from forkwise.core.cli.connect import read_token
from forkwise.core.errors import StoreLocked
from forkwise.core.host import shared_store
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.host.socket_server import serve
from forkwise.core.paths import resolve_store

#: seconds a stopping host waits for its work before it exits without it
STOP_GRACE = 10.0
#: the exit status of a host that had to abandon stuck work
STUCK_EXIT = 3


def run_host(args: argparse.Namespace, out: TextIO, grace: float = STOP_GRACE) -> int:
    return asyncio.run(_serve(args, out, grace))


def exit_after(grace: float) -> None:
    """End the process `grace` seconds from now unless it has ended by then (a daemon
    timer: it never keeps the process alive itself)."""

    def give_up() -> None:
        stuck = [t.name for t in threading.enumerate() if t is not timer and not t.daemon]
        sys.stderr.write(
            f"forkwise host: still busy {grace:g} s after the stop ({', '.join(stuck[:4])});"
            " exiting without that work\n"
        )
        sys.stderr.flush()
        os._exit(STUCK_EXIT)

    timer = threading.Timer(grace, give_up)
    timer.daemon = True
    timer.start()


async def _serve(args: argparse.Namespace, out: TextIO, grace: float = STOP_GRACE) -> int:
    """Serve until SIGINT/SIGTERM; prints one `listening ADDR` line when ready.

    Besides `--listen`, the host serves its store socket (`<store>/host.sock`), where other
    `forkwise` processes on the same store find it."""
    token = read_token(args.token_file) if args.token_file else None
    root = resolve_store(args.store)
    try:
        host = Host.open(root)
    except StoreLocked as exc:
        running = None if isinstance(root, str) else shared_store.host_listening(root)
        exc.message += f" (a host answers at {running})" if running else ""
        raise
    await host.follow_disk()
    problem = await host.apply_saved_settings()
    if problem:
        sys.stderr.write(f"forkwise host: {problem}\n")
    rpc = RpcServer(host, token)
    endpoint: shared_store.StoreEndpoint | None = None
    try:
        server = await serve(rpc, args.listen, allow_remote=args.allow_remote)
        try:
            # a store in a database has no folder for a socket: its hosts share the server
            if not isinstance(root, str) and str(server.address) != shared_store.store_address(
                root
            ):
                endpoint = await shared_store.StoreEndpoint.start(host, root)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            out.write(f"forkwise host listening {server.address}\n")
            out.flush()
            await stop.wait()
            exit_after(grace)
            for sig in (signal.SIGINT, signal.SIGTERM):
                with suppress(ValueError, RuntimeError):
                    loop.remove_signal_handler(sig)
        finally:
            if endpoint is not None:
                await endpoint.close()
            await server.close()
    finally:
        await rpc.close()
        await host.close()
    sys.stderr.write("forkwise host stopped\n")
    return 0
