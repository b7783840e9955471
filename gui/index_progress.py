"""A progress bar while the store's summary index is built or rebuilt.

On a large store with no index (first start, or after the index was deleted), listing the
sessions reads every log: 10,000 sessions take a few seconds. The work runs on the host's
store worker; this shows how far it got, in a dialog that appears only when the work takes
longer than a moment, and never blocks the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog

SHOW_AFTER_MS = 400


async def build_index(host: Any, seen: Callable[[int, int], None] | None = None) -> int:
    """List the store once (building the index as needed) with a progress dialog; returns
    the number of sessions. `seen(done, total)` also receives each progress report."""
    loop = asyncio.get_running_loop()
    dialog = QProgressDialog("Indexing the sessions in this store…", "", 0, 0)
    dialog.setObjectName("indexProgress")
    dialog.setAccessibleName("Indexing sessions")
    dialog.setWindowTitle("Forkwise")
    dialog.setCancelButton(None)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    dialog.setWindowModality(Qt.WindowModality.NonModal)

    def update(done: int, total: int) -> None:
        dialog.setMaximum(total)
        dialog.setValue(done)
        dialog.setLabelText(f"Indexing the sessions in this store… {done:,} of {total:,}")
        if seen is not None:
            seen(done, total)

    def progress(done: int, total: int) -> None:  # called on the store worker
        loop.call_soon_threadsafe(update, done, total)

    try:
        rows = await host.io(host.store.list, progress)
        await asyncio.sleep(0)  # let the last queued update run
        return len(rows)
    finally:
        dialog.reset()
        dialog.deleteLater()
