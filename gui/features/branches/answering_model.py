"""Under an opened fork's title, when it answers with another model than its source's
(an imported Claude Code, Codex or Gemini session whose vendor has no key or endpoint
here): which model will answer, and why — said before the first prompt, not found out
from the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench


def answer_note(model: str | None, provider: str | None, source_model: str | None
                ) -> str | None:
    """The note for a fork on `model` (of `provider`) whose source used `source_model`;
    None when they are the same or either is unknown."""
    if not model or not source_model or model == source_model:
        return None
    return (f"Answers with {model} ({provider or 'its provider'}): {source_model}, its "
            "source's model, has no configured vendor here — see Preferences")


def install_answer_line(bench: Bench) -> QLabel:
    label = QLabel(bench.widget())
    label.setObjectName("answeringModel")
    label.setAccessibleName("Which model answers this session")
    label.setWordWrap(True)
    label.setContentsMargins(8, 0, 8, 0)
    label.setStyleSheet("color: #b36b00")
    label.setVisible(False)
    bench.add_detail_line(label)
    c = bench.controller

    def show(sid: str) -> None:
        if sid != (c.current or ""):
            return
        row = c.tree.summary(sid) if sid else None
        parent = row["parentSession"] if row is not None else None
        source = c.tree.summary(parent) if isinstance(parent, str) else None
        note = None
        if row is not None and source is not None and row["relation"] != "subagent":
            note = answer_note(row["model"], row["provider"], source["model"])
        label.setText(note or "")
        label.setVisible(note is not None)

    c.sessionOpened.connect(show)
    c.sessionChanged.connect(show)
    return label
