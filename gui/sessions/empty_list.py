"""What the session list says when it shows no row: an empty store says how to start (a
new session, or the sessions of the agents a person already uses), and a filter that
matches nothing says so, rather than a blank pane (the text goes in the tree's
placeholder, which says "Loading sessions…" until the store is loaded)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QLabel

    from forkwise.gui.kernel.controller import Controller

EMPTY = ("No sessions yet.\n\nNew session (Ctrl+N) starts one;\nImport sessions… (Ctrl+I) "
         "brings in your\nClaude Code, Codex and pi sessions.")
SEARCHING = "No title has “{}”.\nSearching the messages…"
NO_MATCH = "No session has “{}”\nin its title or messages.\n\nEscape clears the filter."


def text_for(pattern: str, answered: bool) -> str:
    if not pattern:
        return EMPTY
    return (NO_MATCH if answered else SEARCHING).format(pattern)


def install(label: QLabel, c: Controller, pattern: Callable[[], str]) -> None:
    """Keep the tree's placeholder `label` in step with its rows (`pattern`: the filter's
    text)."""
    label.setWordWrap(True)
    label.setContentsMargins(12, 12, 12, 12)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)

    def update(*_args: Any) -> None:
        if not c.loaded:
            return  # "Loading sessions…" (or the reason the store did not open)
        if c.proxy.rowCount() > 0:
            label.hide()
            return
        text = text_for(pattern().strip(), c.proxy.answered)
        label.setText(text)
        label.setAccessibleName(text.replace("\n", " "))
        label.show()

    for signal in (c.proxy.rowsInserted, c.proxy.rowsRemoved, c.proxy.modelReset,
                   c.proxy.layoutChanged, c.proxy.answeredSignal, c.treeLoaded):
        signal.connect(update)
    QTimer.singleShot(0, update)  # after the load that may be installing this is done
