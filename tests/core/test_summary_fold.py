"""SummaryFold.result builds the summary field by field: a field it forgot would come
back as its default."""

from __future__ import annotations

from dataclasses import fields

from forkwise.core.log.usage import OwnUsage
from forkwise.core.store.session import SessionSummary, SummaryFold


def test_a_fold_of_nothing_keeps_every_field_of_the_summary() -> None:
    start = SessionSummary(
        id="s", created="c", cwd="/w", parent_session="p", seed_length=3, relation="fork",
        title="t", events=9, turns=2, messages=4, updated="u", running=True, model="m",
        provider="pr", first_user_text="hi", reasoning="high", source="codex",
        error={"code": "x"}, approvals=(("approval-1", "read_file"),),
        usage=OwnUsage((["m", "2026-01-05", 1, 2, 3, 4, 0, None],)),
    )  # fmt: skip
    defaults = SessionSummary(id="", created="", cwd="")
    # every field is set apart from its default, so a forgotten one shows
    assert all(getattr(start, f.name) != getattr(defaults, f.name) for f in fields(start))
    assert SummaryFold(start).result(start) == start
