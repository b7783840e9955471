"""Python's cyclic garbage collector, run on the GUI thread only.

Left automatic, a collection runs in whichever thread happens to allocate — in this app,
often the host's store worker. A Qt object caught in a reference cycle is then destroyed
off the GUI thread ("QObject::~QObject: Timers cannot be stopped from another thread",
seen here), which Qt does not allow and which can crash the process. So the automatic
collector is switched off and a timer on the GUI thread collects instead, generation by
generation as the allocation counts call for it, as the automatic collector would.

That includes the automatic collector's rule for the oldest generation: a full
collection only once the objects that survived into it since the last one are a quarter
of those that survived that one. Without it, a store of 100,000 sessions (about a
million objects in the client's rows) had the window stop for ~0.4 s at every tenth
middle collection. The survivors of a full collection are frozen (`gc.freeze`), so that
the objects added since are what `gc.get_objects(2)` counts, cheaply, and unfrozen for
the next full collection, which therefore still finds every cycle among them.
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
        """Collect the oldest generation whose allocation count passed its threshold (the
        oldest only when a quarter more objects have survived into it, see above)."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[2] > thresholds[2] and len(gc.get_objects(2)) > gc.get_freeze_count() // 4:
            return _collect_all()
        for generation in (1, 0):
            if counts[generation] > thresholds[generation]:
                return gc.collect(generation)
        return 0

    def stop(self) -> None:
        self._timer.stop()
        _collect_all()
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def stop_at_exit(self) -> None:
        """`stop` for a process about to end: no collection, every object left frozen
        for the exit to free. A full collection over every object here (0.05 to 0.3 s
        with a store of 700 sessions open), and the interpreter's own at its teardown,
        would only free memory the exit frees anyway, and kept the process from ending;
        frozen, a Qt object in a cycle is not destroyed off the GUI thread either."""
        self._timer.stop()
        gc.freeze()
        if self._was_enabled:
            gc.enable()


def _collect_all() -> int:
    """A full collection over every object, its survivors frozen afterwards."""
    gc.unfreeze()
    found = gc.collect(2)
    gc.freeze()
    return found
