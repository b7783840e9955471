"""Python's cyclic garbage collector, run on the GUI thread only.

Left automatic, a collection runs in whichever thread happens to allocate — in this app,
often the host's store worker. A Qt object caught in a reference cycle is then destroyed
off the GUI thread ("QObject::~QObject: Timers cannot be stopped from another thread",
seen here), which Qt does not allow and which can crash the process. So the automatic
collector is switched off and a timer on the GUI thread collects instead, generation by
generation as the allocation counts call for it, as the automatic collector would.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500


class MainThreadCollector(QObject):
    """Owns the timer; `stop()` gives the collector back to Python."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.collect)
        self._timer.start()

    def collect(self) -> int:
        """Collect the oldest generation whose allocation count passed its threshold."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        for generation in (2, 1, 0):
            if counts[generation] > thresholds[generation]:
                return gc.collect(generation)
        return 0

    def stop(self) -> None:
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()
