"""What transcript rows link to comes through one typed registration (`link_rows`, the
window's `Bench.link_rows`): the view alone, over its model, with no app around it."""

from __future__ import annotations

from typing import Any

import pytest

from forkwise.core.reading.entries import TOOL
from forkwise.gui.models.transcript_model import TranscriptModel
from forkwise.gui.transcript.fork_marks import ForkMark
from forkwise.gui.transcript.row_links import RowLinks
from forkwise.gui.transcript.subagent_link import SubagentLink
from forkwise.gui.transcript.transcript_view import TranscriptView

TS = "2026-01-01T00:00:00Z"
EVENTS: list[dict[str, Any]] = [
    {"seq": 1, "type": "turn/start", "turn": "t1", "ts": TS},
    {"seq": 2, "type": "message", "turn": "t1", "ts": TS, "id": "u1", "role": "user",
     "parts": [{"type": "text", "text": "look around"}]},
    {"seq": 3, "type": "message", "turn": "t1", "ts": TS, "id": "a1", "role": "assistant",
     "parts": [{"type": "tool_call", "id": "c1", "name": "Task",
                "args": {"prompt": "count the files"}}]},
    {"seq": 4, "type": "turn/end", "turn": "t1", "ts": TS, "status": "completed"},
]


def shown(qapp: Any) -> tuple[TranscriptView, TranscriptModel]:
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(600, 500)
    model.open("s1", {"events": len(EVENTS)})
    model.add_page("s1", 0, EVENTS)
    view.show()
    return view, model


def test_the_providers_given_decide_the_links_under_rows(qapp: Any) -> None:
    view, model = shown(qapp)
    try:
        tool_row = next(r for r in range(model.rowCount())
                        if (e := model.entry(r)) is not None and e.kind == TOOL)
        first = 0
        assert view.indexWidget(model.index(tool_row, 0)) is None  # nothing provided yet
        view.link_rows(RowLinks(
            subagent_of=lambda row: "child-1" if row == tool_row else None,
            forks_at=lambda row: ["fork-1", "fork-2"] if row == first else []))
        link = view.indexWidget(model.index(tool_row, 0))
        assert isinstance(link, SubagentLink)
        assert link.session_id == "child-1"
        marks = view.indexWidget(model.index(first, 0))
        assert isinstance(marks, ForkMark)
        assert marks.forks == ["fork-1", "fork-2"]
    finally:
        view.close()
        view.deleteLater()


def test_a_hook_takes_one_provider(qapp: Any) -> None:
    view, _model = shown(qapp)
    try:
        view.link_rows(RowLinks(subagent_of=lambda _row: None))
        view.link_rows(RowLinks(forks_at=lambda _row: []))  # another hook: fine
        with pytest.raises(ValueError, match="subagent_of"):
            view.link_rows(RowLinks(subagent_of=lambda _row: "other"))
    finally:
        view.close()
        view.deleteLater()
