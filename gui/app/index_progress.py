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

from forkwise.core.client.api import STORE_INDEXING, Notification

SHOW_AFTER_MS = 400


async def build_index(client: Any, seen: Callable[[int, int], None] | None = None) -> int:
    """Follow the store (subscribe, then list it once, building the index as needed) with a
    progress dialog fed by the host's `store/indexing` notifications; returns the number
    of sessions. `seen(done, total)` also receives each progress report."""
    dialog = QProgressDialog("Indexing the sessions in this store…", "", 0, 0)
    dialog.setObjectName("indexProgress")
    dialog.setAccessibleName("Indexing sessions")
    dialog.setWindowTitle("Forkwise")
    dialog.setCancelButton(None)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    dialog.setWindowModality(Qt.WindowModality.NonModal)

    def update(note: Notification) -> None:
        if note["kind"] != STORE_INDEXING:
            return
        done, total = note["done"], note["total"]
        dialog.setMaximum(total)
        dialog.setValue(done)
        dialog.setLabelText(f"Indexing the sessions in this store… {done:,} of {total:,}")
        if seen is not None:
            seen(done, total)

    unsubscribe = await client.subscribe(update)
    try:
        rows = await client.follow()
        await asyncio.sleep(0)  # let the last notification run
        return len(rows)
    finally:
        await unsubscribe()
        dialog.reset()
        dialog.deleteLater()
