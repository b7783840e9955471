"""`SessionSummary.from_index` and `from_index_row`: the index forms round-trip, and any
field of the wrong exact type (bool is not an int, an int is not a bool) or a missing one
is refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from forkwise.core.store.session import INDEX_ROW_KEYS, SessionSummary

ROW = SessionSummary(
    id="a", created="2026-01-01T00:00:00Z", cwd="/w", parent_session="p", seed_length=3,
    relation="fork", title="T", events=9, turns=2, messages=4, updated="2026-01-02T00:00:00Z",
    running=True, model="m", provider="offline", first_user_text="hi",
    error={"code": "x", "message": "y"},
).to_index()


def test_round_trip_and_optional_fields() -> None:
    assert SessionSummary.from_index(ROW).to_index() == ROW
    optional = dict.fromkeys(("parentSession", "relation", "title", "model", "provider",
                              "firstUserText", "error"))
    assert SessionSummary.from_index({**ROW, **optional}).to_index() == {**ROW, **optional}


@pytest.mark.parametrize(("key", "value"), [
    ("events", True), ("events", "9"), ("events", 9.0), ("running", 1), ("running", None),
    ("id", None), ("created", 5), ("cwd", None), ("updated", None), ("title", 3),
    ("seedLength", None), ("model", ["m"]), ("error", "broken"), ("error", []),
])
def test_a_field_of_the_wrong_type_is_refused(key: str, value: Any) -> None:
    with pytest.raises(TypeError):
        SessionSummary.from_index({**ROW, key: value})


def test_a_missing_field_is_refused() -> None:
    with pytest.raises(KeyError):
        SessionSummary.from_index({k: v for k, v in ROW.items() if k != "turns"})


def test_a_row_round_trips_and_holds_the_fields_in_order() -> None:
    summary = SessionSummary.from_index(ROW)
    row = summary.to_index_row()
    assert row == [ROW[key] for key in INDEX_ROW_KEYS]
    assert SessionSummary.from_index_row(row) == summary
    assert SessionSummary.from_index_row(row).to_index() == ROW


@pytest.mark.parametrize(("key", "value"), [
    ("events", True), ("events", "9"), ("running", 1), ("id", None), ("title", 3),
    ("seedLength", None), ("error", "broken"), ("error", []),
])
def test_a_row_field_of_the_wrong_type_is_refused(key: str, value: Any) -> None:
    row = SessionSummary.from_index(ROW).to_index_row()
    row[INDEX_ROW_KEYS.index(key)] = value
    with pytest.raises(TypeError):
        SessionSummary.from_index_row(row)


@pytest.mark.parametrize("row", [[], ["a"], None, "a", {"id": "a"}, (1,) * len(INDEX_ROW_KEYS)])
def test_a_row_of_the_wrong_shape_is_refused(row: Any) -> None:
    good = SessionSummary.from_index(ROW).to_index_row()
    for bad in (row, [*good, None], good[:-1]):
        with pytest.raises(TypeError):
            SessionSummary.from_index_row(bad)


@pytest.mark.parametrize("form", ["row", "object"])
def test_a_summary_from_the_index_is_a_frozen_summary_like_any_other(form: str) -> None:
    """from_index_row and from_index (a database keeps the object) build it by another
    route (an unfrozen twin whose class is then set): it must be indistinguishable from
    one the constructor makes."""
    row = SessionSummary.from_index(ROW).to_index_row()
    built = SessionSummary(*row)
    made = SessionSummary.from_index_row(row) if form == "row" else SessionSummary.from_index(ROW)
    assert type(made) is SessionSummary
    assert made.usage is None
    assert made == built
    # error and approvals last: a row with neither hashes (a waiting one too: a tuple)
    assert hash(SessionSummary.from_index_row([*row[:-2], None, None])) == hash(
        SessionSummary(*row[:-2], None, None)
    )
    waiting = [*row[:-2], None, {"ap-1": "shell"}]
    assert hash(SessionSummary.from_index_row(waiting)) == hash(
        SessionSummary(*row[:-2], None, (("ap-1", "shell"),))
    )
    assert repr(made) == repr(built)
    assert dataclasses.asdict(made) == dataclasses.asdict(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.title = "changed"  # type: ignore[misc]
    assert dataclasses.replace(made, title="other").title == "other"
    assert made.title == "T"
