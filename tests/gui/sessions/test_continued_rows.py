"""A session continued in an agent (a Continue in read back beneath the session it
continues, relation "continued"): its row and its transcript's fork header say so, not
"Forked from … at event 0" nor "Imported from"."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from forkwise.core.client.rows import session_row
from forkwise.gui.models.session_rows import TITLE, decoration, row_data
from forkwise.gui.transcript.fork_header import ForkHeader
from forkwise.gui.widgets.source_badges import source_icon

CONTINUED = {
    "id": "codex-0199",
    "title": "list the files",
    "parentSession": "mine",
    "seedLength": 0,
    "relation": "continued",
    "source": "codex",
}
TITLES = {"mine": "My fork", "codex-0199": "list the files"}


def tooltip(summary: dict[str, Any]) -> str:
    role = Qt.ItemDataRole.ToolTipRole
    text = row_data(summary["id"], session_row(summary), TITLE, role,
                    lambda s: TITLES.get(s, s))
    assert isinstance(text, str)
    return text


def test_the_row_of_a_continued_session_says_where_it_was_continued(qapp: Any) -> None:
    text = tooltip(CONTINUED)
    assert "Continued in Codex from “My fork”" in text
    assert "Forked from" not in text
    assert "Imported from" not in text
    # the agent's tile, as its own sessions have: the row says which agent at a glance
    assert decoration(session_row(CONTINUED)).cacheKey() == source_icon("codex").cacheKey()
    # a fork of an imported session still says it is one
    fork = {**CONTINUED, "relation": "fork", "seedLength": 4}
    assert "Forked from “My fork” at event 4" in tooltip(fork)


def test_the_fork_header_of_a_continued_session(qapp: Any) -> None:
    header = ForkHeader("mine", "My fork", "at the beginning", continued=True)
    assert header.link.accessibleName() == "Continued from My fork; activate to show the source"
    plain = ForkHeader("mine", "My fork", "at the beginning")
    assert plain.link.accessibleName().startswith("Forked from My fork at the beginning")
