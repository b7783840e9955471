"""Two processes, one store: one writer, and every other process goes through it.

The process that holds a store's writer lock and runs for a while (the desktop app,
`forkwise host`) also serves its host on `<store>/host.sock`: bound only once the lock is
held, 0600 before it listens, removed before the lock is released. A socket left by a
process that died is stale; the next writer replaces it. Another process that finds the
store locked connects to that socket; if nothing answers there within a bounded wait, it
opens the store read-only and says so. Nothing ever writes without the lock, so a second
instance cannot lose or interleave writes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from forkwise.core.errors import ForkwiseError, StoreLocked
from forkwise.core.store import writer_lock

if TYPE_CHECKING:  # a short CLI command never serves: it does not pay for these imports
    from forkwise.core.host.host import Host
    from forkwise.core.host.rpc import RpcServer
    from forkwise.core.host.socket_server import SocketServer

log = logging.getLogger(__name__)
T = TypeVar("T")

STORE_SOCKET: Final = "host.sock"
#: sun_path holds 108 bytes on Linux, 104 on macOS, both counting the final NUL
MAX_SOCKET_PATH: Final = 103
#: how long a command that must write waits for a busy store (another short command)
WRITE_WAIT: Final = 10.0
#: how long the desktop app waits (another instance may be starting) before read-only
APP_WAIT: Final = 3.0
WAIT_ENV: Final = "FORKWISE_LOCK_WAIT"
POLL: Final = 0.05


def store_socket(store_dir: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(store_dir)) / STORE_SOCKET


def store_address(store_dir: str | os.PathLike[str]) -> str:
    return f"unix:{store_socket(store_dir)}"


def lock_wait(default: float) -> float:
    """`default`, or $FORKWISE_LOCK_WAIT seconds when set (tests, slow machines)."""
    try:
        return max(0.0, float(os.environ[WAIT_ENV]))
    except (KeyError, ValueError):
        return default


def host_listening(store_dir: str | os.PathLike[str]) -> str | None:
    """The address of the host serving `store_dir` if something accepts on its socket."""
    path = store_socket(store_dir)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    import socket  # only once the store is found locked

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2.0)
        probe.connect(str(path))
    except OSError:
        return None  # stale: the process that bound it is gone
    finally:
        probe.close()
    return f"unix:{path}"


def claim(
    store_dir: str | os.PathLike[str], open_writer: Callable[[], T], wait: float
) -> T | str | None:
    """`open_writer()` once it gets the writer lock, else the address of the running host
    once one answers on the store socket; None when neither happens within `wait` seconds.

    Blocking (it polls): call it off the event loop."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return open_writer()
        except StoreLocked:
            pass
        address = host_listening(store_dir)
        if address is not None:
            return address
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL)


def lock_holder(store_dir: str | os.PathLike[str]) -> str | None:
    """Which process holds the store's writer lock, or None when none does."""
    return writer_lock.lock_holder(Path(store_dir) / "writer.lock")


def locked_message(store_dir: str | os.PathLike[str]) -> str:
    holder = lock_holder(store_dir) or "another Forkwise process"
    return (
        f"{holder} is writing to {store_dir} and does not answer on "
        f"{store_socket(store_dir)}"
    )


class StoreEndpoint:
    """A writer's host served on its store socket (no token: the socket is 0600 inside
    the 0700 store, so only the store's owner can connect)."""

    def __init__(self, rpc: RpcServer, server: SocketServer) -> None:
        self.rpc = rpc
        self.server = server

    @property
    def address(self) -> str:
        return str(self.server.address)

    @classmethod
    async def start(cls, host: Host, store_dir: str | os.PathLike[str]) -> StoreEndpoint | None:
        """Serve `host`; None (and a warning in the log) when the socket cannot be made."""
        if host.read_only:
            return None  # only the writer serves: the socket means "the lock is held here"
        path = store_socket(store_dir)
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            log.warning("not serving %s: the path is too long for a unix socket", path)
            return None
        from forkwise.core.host.rpc import RpcServer
        from forkwise.core.host.socket_server import SocketServer

        rpc = RpcServer(host)
        try:
            server = await SocketServer.start(rpc, f"unix:{path}")
        except (ForkwiseError, OSError) as exc:
            log.warning("not serving the store to other processes: %s", exc)
            await rpc.close()
            return None
        return cls(rpc, server)

    async def close(self) -> None:
        """Stop serving (the socket goes first, then the connections)."""
        with contextlib.suppress(OSError):
            await self.server.close()
        await self.rpc.close()
