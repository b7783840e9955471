"""How a command reaches the store: always through a client of the host API.

- `--connect ADDR`: that running host.
- A store that a running process serves (the app, `forkwise host`) on `<store>/host.sock`:
  through it, so every command — reads and writes — works while the app is open.
- Otherwise a host in this process, on the store itself (the direct client): writers take
  the store's writer lock; readers open it read-only and change no session, but refresh
  the store's caches (its index, replay checkpoints) while nobody holds the lock.
- A store locked by a process that does not serve it: writers get `store-busy`, naming the
  process; readers read it read-only and say so.
- A store in PostgreSQL (`postgresql://…`): a host in this process on the database, which
  many hosts share (one writer per session: `session-busy` for the others).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from forkwise.core.client.client import Client
from forkwise.core.errors import RpcError, StorageError, StoreLocked
from forkwise.core.host import shared_store
from forkwise.core.host.host import Host
from forkwise.core.paths import resolve_store
from forkwise.core.safe_read import open_regular, read_fd

#: a token file holds one line; more than this is not a token file
MAX_TOKEN_BYTES = 4096


def read_token(path: str | None) -> str | None:
    """The token in `path` (a file; `-`: the first line of standard input), else
    $FORKWISE_TOKEN, else None. Never a command-line value: every user reads those."""
    if path is None:
        return os.environ.get("FORKWISE_TOKEN") or None
    if path == "-":
        line = sys.stdin.readline(MAX_TOKEN_BYTES).strip()
        if not line:
            raise RpcError("no token on standard input (--token-file -)")
        return line
    file = Path(path).expanduser()
    try:
        fd = open_regular(file, follow=True)  # never a FIFO's wait
        try:
            mode = os.fstat(fd).st_mode
            raw = read_fd(fd, MAX_TOKEN_BYTES, file)
        finally:
            os.close(fd)
        token = raw.decode("utf-8", "replace").strip()
    except OSError as exc:
        raise StorageError(
            f"cannot read the token file {path}: {exc.strerror or exc}"
        ) from exc
    if mode & 0o077:
        sys.stderr.write(
            f"forkwise: warning: the token file {path} can be read by other users"
            f" (mode {stat.S_IMODE(mode):04o}); anyone who reads it can use the host"
            f" — chmod 600 {path}\n"
        )
    if not token:
        raise RpcError(f"the token file {path} is empty")
    return token


@asynccontextmanager
async def open_client(
    store: str | None, connect: str | None, token_file: str | None, *, write: bool
) -> AsyncIterator[Client]:
    """A one-shot client (no catalogue, no subscription) for one command."""
    if connect:
        client = await Client.connect(connect, read_token(token_file), follow=False)
    else:
        location = resolve_store(store)
        if isinstance(location, str):  # a database: every process is a host of its own
            shared = await asyncio.to_thread(Host.open, location, read_only=not write)
            try:
                async with _in_process(shared) as client:
                    yield client
            finally:
                await shared.close()
            return
        root = location
        # a reader's probes (an lstat, the lock file, a read-only open that reads nothing
        # yet) take less than a thread to run them on: each hop off the loop starts and
        # joins a thread, and waits to be woken on a busy machine. A writer may wait for
        # the lock (`shared_store.claim` polls): off the loop.
        if write:
            running = await asyncio.to_thread(shared_store.host_listening, root)
        else:
            running = shared_store.host_listening(root)
        if running is not None:
            client = await Client.connect(running, follow=False)
        else:
            if write:
                host = await asyncio.to_thread(_own_host, root, write)
            else:
                host = _own_host(root, write)
            if isinstance(host, str):
                client = await Client.connect(host, follow=False)
            else:
                try:
                    async with _in_process(host) as client:
                        yield client
                finally:
                    await host.close()
                return
    try:
        yield client
    finally:
        await client.close()


@asynccontextmanager
async def _in_process(host: Host) -> AsyncIterator[Client]:
    if not host.read_only:
        problem = await host.apply_saved_settings()
        if problem:
            sys.stderr.write(f"forkwise: {problem}\n")
    host.index_after_import = False  # the process ends with its one command
    client = await Client.in_process(host, follow=False, shared=True)  # written out, dropped
    try:
        yield client
    finally:
        await client.close()


def _own_host(root: Path, write: bool) -> Host | str:
    """A host in this process on `root`, or the address of a process that serves it."""
    if not write:
        held = shared_store.lock_holder(root) is not None
        if held:
            sys.stderr.write(
                f"forkwise: {shared_store.locked_message(root)}; reading the store read-only\n"
            )
        host = Host.open(root, read_only=True)
        host.orphaned = not held  # nobody writes: an open turn there was left by a crash
        return host
    wait = shared_store.lock_wait(shared_store.WRITE_WAIT)
    claimed = shared_store.claim(root, lambda: Host.open(root), wait)
    if claimed is None:
        raise StoreLocked(
            shared_store.locked_message(root) + "; nothing was changed, try again later",
            store=str(root),
        )
    return claimed
