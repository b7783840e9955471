"""`forkwise host`: serve a store headless, over a socket, until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from contextlib import suppress
from typing import TextIO

from forkwise.core.cli.connect import read_token
from forkwise.core.errors import StoreLocked
from forkwise.core.host import shared_store
from forkwise.core.host.carriers import serve
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.paths import resolve_store


def run_host(args: argparse.Namespace, out: TextIO) -> int:
    return asyncio.run(_serve(args, out))


async def _serve(args: argparse.Namespace, out: TextIO) -> int:
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
