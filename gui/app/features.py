"""The features the app installs into its window, in this order: the one list to extend
when a feature is added (a folder under gui/features with an `install(bench)` function).

Each import is deferred to the install: none of these modules is on the first frame's
path. Features marked `late` are installed once the window has painted its first frame
and the tree shows its first rows; the others right after the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forkwise.gui.shell.bench import Feature

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench


def _branches(bench: Bench) -> object:
    from forkwise.gui.features.branches.branch_actions import install

    return install(bench)


def _housekeeping(bench: Bench) -> object:
    from forkwise.gui.features.housekeeping.housekeeping import install

    return install(bench)


def _preferences(bench: Bench) -> object:
    from forkwise.gui.features.preferences.settings_dialog import install

    return install(bench)


def _reading(bench: Bench) -> object:
    from forkwise.gui.features.reading.reading import install

    return install(bench)


def _agents(bench: Bench) -> object:
    from forkwise.gui.features.agents.agents import install

    install(bench)
    return None


FEATURES: tuple[Feature, ...] = (
    Feature("branches", _branches),
    Feature("housekeeping", _housekeeping),
    Feature("preferences", _preferences),
    Feature("reading", _reading),
    Feature("agents", _agents, late=True),
)
