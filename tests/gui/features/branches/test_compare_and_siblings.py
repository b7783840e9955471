"""The Qt-free parts of the branch views: how two logs are aligned for comparing, and
which forks are siblings and what they are called."""

from __future__ import annotations

from typing import Any

import pytest

from forkwise.core.client.rows import session_row
from forkwise.core.reading.compare import blocks, common_prefix, compare
from forkwise.gui.domain.siblings import display_title, position, siblings, step

pytestmark = pytest.mark.gui

Json = dict[str, Any]


def turn(events: list[Json], n: int, question: str, tool: bool = False) -> None:
    def add(**e: Any) -> None:
        events.append({"seq": len(events) + 1, "ts": f"t{len(events)}", **e})

    add(type="turn/start", turn=f"t{n}")
    add(type="message", turn=f"t{n}", id=f"user:{n}", role="user",
        parts=[{"type": "text", "text": question}])
    if tool:
        add(type="message", turn=f"t{n}", id=f"assistant:c{n}", role="assistant",
            parts=[{"type": "tool_call", "id": f"c{n}", "name": "read_file",
                    "args": {"path": "README.md"}}])
        add(type="tool/result", turn=f"t{n}", call=f"c{n}", output="# Readme")
    add(type="message", turn=f"t{n}", id=f"assistant:{n}", role="assistant",
        parts=[{"type": "text", "text": f"answer to {question}"}])
    add(type="turn/end", turn=f"t{n}", status="completed")


def test_compare_collapses_the_shared_prefix_and_aligns_turns() -> None:
    source: list[Json] = []
    turn(source, 1, "plan it")
    turn(source, 2, "two weeks?")
    child = [dict(e) for e in source[:4]]  # through the end of turn 1, copied
    child.append({"seq": 5, "ts": "x", "type": "history/fork", "source": "src", "boundary": 4})
    turn(child, 3, "three weeks?", tool=True)
    turn(child, 4, "and the notes?")
    assert common_prefix(source, child) == 4
    result = compare(source, child, title_of=lambda sid: f"<{sid}>")
    assert result.shared == 4
    assert result.shared_turns == 1
    assert "1 turn in common (events 1 to 4)" in result.shared_line()
    assert "plan it" in result.shared_line()
    # the fork record beside nothing, then turn beside turn, then a turn beside nothing
    assert result.rows[0][0] is None
    assert "Forked from <src> at event 4" in result.rows[0][1].text
    left, right = result.rows[1]
    assert "You: two weeks?" in left.text
    assert "You: three weeks?" in right.text
    assert '⚙ read_file({"path":"README.md"})' in right.text
    assert "→ result: # Readme" in right.text
    assert result.rows[2][0] is None
    assert "and the notes?" in result.rows[2][1].text
    assert len(result.rows) == 3


def test_compare_of_identical_and_unrelated_logs() -> None:
    log: list[Json] = []
    turn(log, 1, "hello")
    same = compare(log, [dict(e) for e in log])
    assert same.shared == len(log)
    assert same.rows == []
    other: list[Json] = [{"seq": 1, "ts": "t", "type": "session/title", "title": "x"}]
    turn(other, 1, "something else")
    apart = compare(log, other)
    assert apart.shared == 0
    assert apart.shared_line() == "Nothing in common: they differ from the first event"
    assert [(a is None, b is None) for a, b in apart.rows] == [(True, False), (False, False)]
    assert [b.kind for b in blocks(log)] == ["turn"]


def summaries() -> dict[str, Json]:
    return {
        "src": {"id": "src", "title": "Plan the 2.5 release", "titleSet": True,
                "firstQuestion": "We want to ship 2.5", "parentSession": None},
        "a": {"id": "a", "created": "1", "parentSession": "src", "seedLength": 10,
              "title": "We want to ship 2.5", "titleSet": False,
              "firstQuestion": "We want to ship 2.5"},
        "b": {"id": "b", "created": "2", "parentSession": "src", "seedLength": 10,
              "title": "Plan the 2.5 release", "titleSet": True,
              "firstQuestion": "We want to ship 2.5"},
        "c": {"id": "c", "created": "3", "parentSession": "src", "seedLength": 10,
              "title": "Ship in May", "titleSet": True, "firstQuestion": "We want to ship 2.5"},
        "d": {"id": "d", "created": "4", "parentSession": "src", "seedLength": 0,
              "title": "Something else entirely", "titleSet": False,
              "firstQuestion": "Something else entirely"},
        "sub": {"id": "sub", "created": "5", "parentSession": "src", "seedLength": 10,
                "relation": "subagent", "title": "Subagent: x", "titleSet": True},
        "aa": {"id": "aa", "created": "6", "parentSession": "a", "seedLength": 14,
               "title": "We want to ship 2.5", "titleSet": False,
               "firstQuestion": "We want to ship 2.5"},
    }


def test_siblings_are_forks_of_one_point_and_titles_tell_them_apart() -> None:
    rows = {sid: session_row(row) for sid, row in summaries().items()}

    def children(sid: str | None) -> list[str]:
        return [k for k, v in rows.items() if v.get("parentSession") == sid]

    get = rows.get
    assert siblings("a", get, children) == ["a", "b", "c"]  # not d, the subagent, the source
    assert siblings("src", get, children) == []
    assert position("b", get, children) == (2, 3)
    assert position("d", get, children) is None
    assert position("sub", get, children) is None
    assert step("b", +1, get, children) == "c"
    assert step("c", +1, get, children) is None
    assert step("a", -1, get, children) is None
    assert display_title("a", get, children) == "Plan the 2.5 release — fork 1"
    assert display_title("b", get, children) == "Plan the 2.5 release — fork 2"
    assert display_title("c", get, children) == "Ship in May"  # renamed
    assert display_title("d", get, children) == "Something else entirely"  # its own question
    assert display_title("aa", get, children) == "Plan the 2.5 release — fork 1 — fork 1"
    assert display_title("src", get, children) == "Plan the 2.5 release"


def test_a_fork_an_importer_named_by_the_question_it_shares_reads_as_a_fork() -> None:
    """A Claude Code rewind or a Codex fork: titled (titleSet) by its first question, as
    the importer shortens it, which is its source's first question too."""
    question = "Why does the   release build fail " + "on macOS " * 20
    flat = " ".join(question.split())
    rows = {
        "src": {"id": "src", "title": "Release build", "titleSet": True,
                "firstQuestion": question, "parentSession": None},
        "x": {"id": "x", "created": "1", "parentSession": "src", "seedLength": 7,
              "title": flat[:99].rstrip() + "…", "titleSet": True, "firstQuestion": question},
        "y": {"id": "y", "created": "2", "parentSession": "src", "seedLength": 7,
              "title": flat[:79] + "…", "titleSet": True, "firstQuestion": question},
        # a title that only starts like the question, not cut: its own
        "z": {"id": "z", "created": "3", "parentSession": "src", "seedLength": 7,
              "title": "Why does the release build", "titleSet": True,
              "firstQuestion": question},
        # the same title, but the fork asked something else first: its own
        "w": {"id": "w", "created": "4", "parentSession": "src", "seedLength": 0,
              "title": "Deploy", "titleSet": True, "firstQuestion": "Deploy"},
    }
    rows = {sid: session_row(row) for sid, row in rows.items()}

    def children(sid: str | None) -> list[str]:
        return [k for k, v in rows.items() if v.get("parentSession") == sid]

    get = rows.get
    assert display_title("x", get, children) == "Release build — fork 1"
    assert display_title("y", get, children) == "Release build — fork 2"
    assert display_title("z", get, children) == "Why does the release build"
    assert display_title("w", get, children) == "Deploy"
