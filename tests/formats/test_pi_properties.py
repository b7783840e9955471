"""Property tests over random pi session trees: every session the reader makes is a valid
Forkwise log, holds exactly the messages of its path (an oracle written from the pi entry
types), equals a conversion of its path from the root, and survives export → read."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pi_export import export_input
from pi_fixtures import SID, PiSession, settled
from pi_store import messages, store_and_replay

from forkwise.core.formats.pi import READER, WRITER
from forkwise.core.formats.pi import entries as pi_entries
from forkwise.core.formats.pi.convert import PathConverter
from forkwise.core.formats.pi.reader import plan

STOPS = ("stop", "toolUse", "aborted", "error", "length")

step = st.one_of(
    st.tuples(st.just("user"), st.sampled_from(["hi", "fix the bug", "", "again please"])),
    st.tuples(st.just("answer"), st.tuples(st.sampled_from(STOPS), st.sampled_from(["m1", "m2"]))),
    st.tuples(st.just("call"), st.booleans()),
    st.tuples(st.just("bash"), st.integers(0, 2)),
    st.tuples(st.just("model"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("thinking"), st.sampled_from(["off", "low", "high"])),
    st.tuples(st.just("label"), st.integers(0, 50)),
    st.tuples(st.just("compaction"), st.integers(0, 50)),
    st.tuples(st.just("branch"), st.integers(-1, 50)),
)


def build(steps: list[tuple[str, Any]]) -> PiSession:
    s = PiSession(SID)
    ids: list[str] = []
    calls = 0
    for kind, arg in steps:
        if kind == "user":
            ids.append(s.user(arg))
        elif kind == "answer":
            ids.append(
                s.assistant(
                    f"answer {len(ids)}", stop=arg, error="boom" if arg == "error" else None
                )
            )
        elif kind == "call":
            calls += 1
            ids.append(s.assistant(calls=((f"c{calls}", "read", {"n": calls}),)))
            ids.append(s.tool_result(f"c{calls}", "read", f"out {calls}", is_error=arg))
        elif kind == "bash":
            ids.append(s.bash("ls", "x\n", exit_code=arg))
        elif kind == "model":
            ids.append(s.model_change("p", arg))
        elif kind == "thinking":
            ids.append(s.thinking_level(arg))
        elif kind == "label" and ids:
            ids.append(s.label(ids[arg % len(ids)], "mark"))
        elif kind == "compaction" and ids:
            ids.append(s.compaction("summary", ids[arg % len(ids)]))
        elif kind == "branch" and ids:
            s.branch(None if arg < 0 else ids[arg % len(ids)])
    if not ids:
        s.user("only")
    return s


def oracle(path: list[pi_entries.Entry]) -> list[tuple[str, str]]:
    """The messages a path holds, from the pi entry types alone."""
    out: list[tuple[str, str]] = []
    for entry in path:
        if entry.type != "message":
            continue
        m = entry.data["message"]
        if m["role"] == "user":
            out.append(("user", "".join(b["text"] for b in m["content"] if b["type"] == "text")))
        elif m["role"] == "assistant":
            out.append(
                ("assistant", "".join(b["text"] for b in m["content"] if b["type"] == "text"))
            )
        elif m["role"] == "bashExecution":
            out += [("user", "!" + m["command"]), ("assistant", "")]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=30))
def test_random_trees_read_store_and_export_faithfully(steps: list[tuple[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = settled(build(steps).write(root / "pi"))
        sessions = READER.read(path)
        file = pi_entries.load(path)
        branches, _ = plan(file)
        assert [s.id for s in sessions] == [b.id for b in branches]
        assert len({s.id for s in sessions}) == len(sessions)
        for n, (session, branch) in enumerate(zip(sessions, branches, strict=True)):
            assert messages(session) == oracle(branch.path)
            fresh = PathConverter(SID, file.header["timestamp"]).convert(branch.path)
            assert session.events == fresh
            replayed, _ = store_and_replay(root / f"store{n}", session)
            assert replayed.open_turn is None
            done = WRITER.export(export_input(session), root / "out", None)
            [again] = READER.read(settled(done.path))
            assert messages(again) == messages(session)
            assert again.parent == session.id
