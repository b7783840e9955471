"""Opening a store for a front end that stays open (the desktop app, the GUI benchmarks):
the one assembly of host, store socket and client.

- `--connect ADDR`: a client of that running host.
- A store another process writes to and serves on `<store>/host.sock`: a client of it.
- Otherwise this process takes the writer lock and runs the host, serves it to other
  processes on the store socket, and applies the saved provider settings.
- A store locked by a process that does not answer: read-only, with a warning to show.
- A store in PostgreSQL (a `postgresql://` URL): this process runs a host on the database
  (other hosts on it see its changes through LISTEN/NOTIFY).
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forkwise.core.errors import ForkwiseError, HostUnavailable

if TYPE_CHECKING:  # imported when a store is opened: `indexed_rows` runs before that
    from forkwise.core.client.client import Client
    from forkwise.core.host import shared_store
    from forkwise.core.host.host import Host

log = logging.getLogger(__name__)


def indexed_rows(store_dir: Path | str | None, newest: int | None = None) -> list[dict[str, Any]]:
    """The catalogue rows of a folder store's summary index, for the logs it still matches,
    newest first (`listing.activity_key`): what a window shows while the host opens,
    without importing or starting it (no lock, no log read). `newest`: only the rows a
    list sorted by last activity starts with (the `newest` most recently active sessions
    at the top of their lineage, and every session beneath them). The host's listing
    follows and is the truth: it adds what the index does not know and may differ where
    only a host can tell — the model a session without one will use (left None here) and
    whether a turn runs (False here). [] for a database, a remote host, or a store that
    cannot be read."""
    if not isinstance(store_dir, Path):
        return []
    from forkwise.core.runtime.listing import newest_first, summary_row
    from forkwise.core.store.backends.jsonl import JsonlBackend

    try:
        summaries = JsonlBackend(store_dir, writable=False).indexed_summaries(newest)
    except (OSError, ForkwiseError) as exc:
        log.info("no rows from the index of %s: %s", store_dir, exc)
        return []
    rows = []
    for summary in summaries:
        row = summary_row(summary)
        if summary.model is None:
            row["model"] = row["provider"] = None
        row["running"] = False
        rows.append(row)
    newest_first(rows)  # as a list by activity shows them
    return rows


def save_index_head(store_dir: Path | str | None) -> bool:
    """Write the head of a folder store's index (`index_head`) as the index is now: the
    app does once its host has closed the store, so that its next start reads the first
    page's entries instead of the whole index. The catalogue writes a head with each index
    it writes (`index_head.save_head`): this makes one only when there is none of the
    current index (a store written by an older version). False when there is nothing to
    write."""
    if not isinstance(store_dir, Path):
        return False
    from forkwise.core.store.backends.index_head import write_head

    return write_head(store_dir / "index.json")


@dataclass
class OpenedStore:
    """A client, and what this process runs for it (closed by `close`)."""

    client: Client
    #: the host this process runs (None when it uses another process's)
    host: Host | None = None
    endpoint: shared_store.StoreEndpoint | None = None
    #: a sentence for the person ("" when there is none): read-only, broken settings
    warning: str = ""
    read_only: bool = False

    @property
    def shared(self) -> bool:
        """Whether another process serves the store this client uses."""
        return self.host is None

    async def close(self) -> None:
        await self.client.close()
        if self.endpoint is not None:
            await self.endpoint.close()
        if self.host is not None:
            await self.host.close()


async def open_store(
    store_dir: Path | str | None,
    connect: str | None = None,
    token: str | None = None,
    *,
    wait: float | None = None,
    serve: bool = True,
) -> OpenedStore:
    """The store (or host) a front end works on; see the module docstring."""
    from forkwise.core.client.client import Client
    from forkwise.core.host import shared_store
    from forkwise.core.host.host import Host

    if connect:
        token = token or os.environ.get("FORKWISE_TOKEN")
        return OpenedStore(await Client.connect(connect, token, follow=False))
    assert store_dir is not None
    if isinstance(store_dir, str):  # a database: this process is one of its hosts
        host = await asyncio.to_thread(Host.open, store_dir)
        problem = await host.apply_saved_settings()
        warning = problem[0].upper() + problem[1:] + "." if problem else ""
        return OpenedStore(await Client.in_process(host, follow=False), host, None, warning)
    store_dir.mkdir(parents=True, exist_ok=True)
    patience = shared_store.lock_wait(shared_store.APP_WAIT) if wait is None else wait
    claimed = await asyncio.to_thread(
        shared_store.claim, store_dir, lambda: Host.open(store_dir), patience
    )
    if isinstance(claimed, Host):
        endpoint = await shared_store.StoreEndpoint.start(claimed, store_dir) if serve else None
        await claimed.follow_disk()  # other programs' changes to the files show up
        problem = await claimed.apply_saved_settings()
        warning = problem[0].upper() + problem[1:] + "." if problem else ""
        client = await Client.in_process(claimed, follow=False)
        return OpenedStore(client, claimed, endpoint, warning)
    if isinstance(claimed, str):
        try:
            return OpenedStore(await Client.connect(claimed, follow=False))
        except HostUnavailable as exc:
            log.warning("the running Forkwise at %s did not answer: %s", claimed, exc)
    host = await asyncio.to_thread(Host.open, store_dir, read_only=True)
    warning = (
        f"Read-only: {shared_store.locked_message(store_dir)}. Nothing can be changed "
        "here; changes made there show up here as they reach the disk."
    )
    await host.follow_disk()
    client = await Client.in_process(host, follow=False)
    return OpenedStore(client, host, None, warning, read_only=True)
