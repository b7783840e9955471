"""A store backend wrapper whose flushes (or, with `what`, other changes) of one session
wait until the test lets them go: a disk that is slow for one file only."""

from __future__ import annotations

import threading
from typing import Any

from forkwise.core.store.backend import Backend
from forkwise.core.store.session import SessionFlushed, StoreEvent

WAIT = 10.0  # seconds: a bound on the hold, never reached when the test behaves


class HeldFlushes:
    def __init__(
        self, inner: Backend, held: str, what: type[StoreEvent] = SessionFlushed
    ) -> None:
        self.inner = inner
        self.held = held
        self.what = what
        self.flushing = threading.Event()
        self.release = threading.Event()

    def persist(self, change: StoreEvent) -> None:
        if isinstance(change, self.what) and change.session_id == self.held:
            self.flushing.set()
            assert self.release.wait(WAIT), "the test never released the flush"
        self.inner.persist(change)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
