"""`event_log.gc_paused`: what a pause kept goes to the oldest generation unwalked, stays
collectable, and objects someone froze on purpose stay frozen."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from forkwise.core.log.event_log import gc_paused


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()


def test_what_the_pause_kept_is_old_and_a_cycle_in_it_is_still_collected(
    collector: None,
) -> None:
    gc.collect()
    with gc_paused():
        assert not gc.isenabled()
        kept = [{"n": i} for i in range(20_000)]  # far past the young generation's threshold
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: garbage once dropped
        gone = weakref.ref(a)
        del a, b
    assert gc.isenabled()
    # moved to the oldest generation as they were: the young generation starts empty,
    # so the next allocation does not walk the 20,000 dicts
    assert gc.get_count()[0] < 700
    assert gc.get_freeze_count() == 0  # nothing is left frozen
    assert gone() is not None  # nothing walked it yet
    gc.collect()
    assert gone() is None  # still tracked: a full collection finds the cycle
    assert len(kept) == 20_000


def test_objects_frozen_on_purpose_stay_frozen(collector: None) -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    with gc_paused():
        [{"n": i} for i in range(1000)]
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


def test_a_pause_inside_a_pause_leaves_the_collector_off_until_the_outer_ends(
    collector: None,
) -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector switched off by its owner, as the app does (gui/app/main_thread_gc)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_with_the_collector_off_a_log_kept_in_a_pause_is_moved_old(collector_off: None) -> None:
    from forkwise.core.log.event_log import LONG_LIVED

    gc.collect()
    with gc_paused():
        kept = [{"n": i} for i in range(LONG_LIVED + 1000)]
    assert not gc.isenabled()  # the owner's choice is kept
    # nothing young for the owner's next young collection to walk (on the GUI thread)
    assert gc.get_count()[0] < 700
    assert gc.get_freeze_count() == 0
    assert len(kept) == LONG_LIVED + 1000


def test_with_the_collector_off_a_small_pause_stays_young(collector_off: None) -> None:
    gc.collect()
    with gc_paused():
        kept = [{"n": i} for i in range(5000)]
    assert not gc.isenabled()
    assert gc.get_count()[0] >= 5000  # left for the owner's young collection
    assert len(kept) == 5000
