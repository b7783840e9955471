"""What the notifier (gui/kernel/notify) hands the banner: one message for the person.

A module of its own: a dataclass is compiled when its class is made (~1 ms of CPU here),
and the window's first frame, which builds the notifier, posts nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forkwise.gui.kernel.levels import Level


@dataclass(frozen=True)
class Notice:
    level: Level
    text: str
    code: str = ""
    when: datetime = field(default_factory=datetime.now)
    #: a button beside the text (e.g. "Undo") and what it does
    action_label: str = ""
    action: Callable[[], None] | None = field(default=None, compare=False)
