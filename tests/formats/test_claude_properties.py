"""Property tests: any transcript built from Claude Code's moves (prompts, replies, parallel
tool calls, interruptions, meta entries, compactions, rewinds, titles) reads into sessions
the store accepts, whose main line is the chain `claude --resume` continues, and whose
export reads back to the same conversation; any byte mangling gives a FormatError or
sessions, never another exception."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
from claude_checks import convo, export_input, stored
from claude_fixtures import SID, Transcript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forkwise.core.formats.base import FormatError
from forkwise.core.formats.claude import READER, WRITER
from forkwise.core.formats.claude.tree import prompt_text

WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool)
MOVES = st.one_of(
    st.tuples(st.just("prompt"), WORDS),
    st.tuples(st.just("reply"), WORDS),
    st.tuples(st.just("tools"), st.integers(1, 3)),
    st.tuples(st.just("interrupt")),
    st.tuples(st.just("meta")),
    st.tuples(st.just("compact")),
    st.tuples(st.just("rewind"), st.integers(0, 50)),
    st.tuples(st.just("title"), WORDS),
)


def build(moves: list[tuple[Any, ...]]) -> Transcript:
    t = Transcript(SID)
    replies: list[str] = []
    calls = 0
    t.user("start")
    for move in moves:
        kind = move[0]
        if kind == "prompt":
            t.user(move[1])
        elif kind == "reply":
            replies.extend(t.assistant([{"type": "text", "text": move[1]}]))
        elif kind == "tools":
            blocks = []
            for _ in range(move[1]):
                calls += 1
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{calls}",
                        "name": "Read",
                        "input": {"n": calls},
                    }
                )
            made = t.assistant(blocks, stop="tool_use")
            for n, entry in enumerate(made):
                t.tool_result(blocks[n]["id"], f"out {n}", entry)
            replies.extend(t.assistant([{"type": "text", "text": "read"}]))
        elif kind == "interrupt":
            t.interrupt()
        elif kind == "meta":
            t.meta("<command-name>/status</command-name>")
        elif kind == "compact":
            t.compact("summary")
        elif kind == "rewind" and replies:
            t.last = replies[move[1] % len(replies)]
            t.user("rewound")
        elif kind == "title":
            t.custom_title(move[1])
    return t


def resume_prompts(t: Transcript) -> list[str]:
    """The typed prompts on the chain ending at the last main-chain entry (an oracle that
    follows parentUuid, and logicalParentUuid across compactions)."""
    tree = {e["uuid"]: e for e in t.entries if "parentUuid" in e}
    node: dict[str, Any] | None = [e for e in t.entries if "parentUuid" in e][-1]
    out: list[str] = []
    while node is not None:
        text = prompt_text(node)
        if text is not None:
            out.append(text)
        up = node.get("parentUuid") or node.get("logicalParentUuid")
        node = tree.get(up) if isinstance(up, str) else None
    return out[::-1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MOVES, max_size=14))
def test_any_transcript_reads_stores_and_round_trips(moves: list[tuple[Any, ...]]) -> None:
    t = build(moves)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = t.write(root / "src" / f"{SID}.jsonl")
        os.utime(path, (1_700_000_000, 1_700_000_000))
        sessions = READER.read(path)
        ids = {s.id for s in sessions}
        assert len(ids) == len(sessions)
        main = sessions[0]
        assert main.parent is None
        for s in sessions[1:]:
            assert s.parent in ids
            assert s.relation == "fork"
        replays = stored(sessions, root / "store")
        prompts = [m.text for m in replays[main.id].messages if m.role == "user"]
        assert prompts == resume_prompts(t)
        done = WRITER.export(export_input(main), root / "claude", None)
        back = READER.read(done.path)
        assert convo(back[0]) == convo(main)


@st.composite
def mangled(draw: st.DrawFn) -> bytes:
    lines = build(draw(st.lists(MOVES, max_size=8))).encode().split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["cut", "drop", "dup", "garbage", "swap", "field"]))
        if op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "garbage":
            lines[i] = draw(st.binary(max_size=20))
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif lines[i].startswith(b"{") and lines[i].endswith(b"}"):
            entry = orjson.loads(lines[i])
            key = draw(st.sampled_from(sorted(entry)))
            entry[key] = draw(st.sampled_from([None, 1, "x", [], {}]))
            lines[i] = orjson.dumps(entry)
        if not lines:
            lines = [b""]
    return b"\n".join(lines)


@settings(max_examples=80, deadline=None)
@given(mangled())
def test_mangled_files_fail_with_a_line_or_read(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{SID}.jsonl"
        path.write_bytes(data)
        os.utime(path, (1_700_000_000, 1_700_000_000))
        failure: FormatError | None = None
        try:
            sessions = READER.read(path)
        except FormatError as exc:
            failure = exc
        if failure is not None:
            assert failure.path == str(path)
            assert failure.line is None or 1 <= failure.line <= data.count(b"\n") + 1
        else:
            stored(sessions, Path(tmp) / "store")
