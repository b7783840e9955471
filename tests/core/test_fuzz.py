"""Fuzzing the log reader: whatever the bytes, a typed error or a successful load.

Files start from a valid generated log and are mangled: truncated, bit-flipped, lines
dropped, duplicated, swapped, garbage and huge lines, invalid UTF-8, another header, deep
JSON nesting. parse_log and a JSONL store must answer with a ForkwiseError or a session
that replays, lists and forks; never another exception, never a modified file.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from logdata import Refused, events_of, file_bytes, header_line, outcome
from strategies import examples, logs

from forkwise.core.errors import ForkwiseError
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.session_store import DiskChange, SessionStore

SID = "fuzz"


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


DEPTHS = st.sampled_from([10, 200, 253, 254, 255, 300, 1000, 1023, 1024, 1025, 50_000])


@st.composite
def mangled(draw: st.DrawFn) -> bytes:
    drafts = draw(logs(max_blocks=4))
    data = file_bytes(SID, events_of(drafts))
    for _ in range(draw(st.integers(1, 3))):
        lines = data.split(b"\n")
        kind = draw(st.sampled_from([
            "truncate", "flip", "drop", "dup", "swap", "garbage", "huge", "utf8", "header",
            "deep-event", "deep-output", "deep-header", "seq", "blank",
        ]))  # fmt: skip
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if kind == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
            continue
        if kind == "flip" and data:
            pos = draw(st.integers(0, len(data) - 1))
            data = (
                data[:pos] + bytes([data[pos] ^ (1 << draw(st.integers(0, 7)))]) + data[pos + 1 :]
            )
            continue
        if kind == "drop" and lines:
            del lines[i]
        elif kind == "dup" and lines:
            lines.insert(i, lines[i])
        elif kind == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "garbage":
            lines.insert(i, draw(st.binary(max_size=40)).replace(b"\n", b""))
        elif kind == "huge":
            body = b"x" * draw(st.sampled_from([1000, 100_000, 2_000_000]))
            lines.insert(
                i,
                draw(
                    st.sampled_from(
                        [body, b'{"seq":1,"type":"plugin/a","ts":"x","v":"' + body + b'"}']
                    )
                ),
            )
        elif kind == "utf8":
            bad = draw(
                st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00"])
            )
            lines[i] = lines[i][: len(lines[i]) // 2] + bad + lines[i][len(lines[i]) // 2 :]
        elif kind == "header":
            lines[0] = draw(st.sampled_from([
                header_line(SID, version=0), header_line(SID, version=2),
                header_line(SID, version="1"), header_line("other"), header_line("../x"),
                header_line(SID, seedLength=-1), header_line(SID, seedLength=10**6),
                header_line(SID, parentSession="../p"), header_line(SID, meta=[1]),
                header_line(SID, cwd=5), b'{"type":"session"}', b"[]", b"null", b'"session"',
            ]))  # fmt: skip
        elif kind == "deep-event":
            seq = draw(st.integers(1, len(lines)))
            lines.insert(
                i, b'{"seq":%d,"type":"plugin/deep","ts":"x","v":%s}' % (seq, nested(draw(DEPTHS)))
            )
        elif kind == "deep-output":
            d = draw(DEPTHS)
            turn = [
                {"type": "turn/start", "turn": "D"},
                {
                    "type": "message",
                    "turn": "D",
                    "id": "assistant:d:1",
                    "role": "assistant",
                    "parts": [{"type": "tool_call", "id": "c", "name": "n", "args": {}}],
                },
            ]
            n = len([x for x in lines[1:] if x.strip()])
            extra = [e.encode() for e in events_of(turn, start=n + 1)]
            extra.append(
                b'{"seq":%d,"type":"tool/result","ts":"x","turn":"D","call":"c","tool":"n","output":%s}'
                % (n + 3, nested(d))
            )
            extra.append(
                b'{"seq":%d,"type":"turn/end","ts":"x","turn":"D","status":"completed"}' % (n + 4)
            )
            while lines and not lines[-1].strip():
                lines.pop()
            lines += [*extra, b""]
        elif kind == "deep-header":
            lines[0] = header_line(SID)[:-1] + b',"x":' + nested(draw(DEPTHS)) + b"}"
        elif kind == "seq":
            lines[i] = lines[i].replace(
                b'"seq":', b'"seq":' + draw(st.sampled_from([b"1", b"-", b"0", b"9"])), 1
            )
        elif kind == "blank":
            lines.insert(i, draw(st.sampled_from([b"", b"   ", b"\t", b"\r"])))
        data = b"\n".join(lines)
    return data


def check_parse(data: bytes) -> None:
    with contextlib.suppress(ForkwiseError):
        parse_log(data, f"{SID}.jsonl")


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


CASES = {"parse": 0, "store": 0}


@examples(300, 100_000)
@given(mangled())
def test_parse_log_raises_only_typed_errors(data: bytes) -> None:
    CASES["parse"] += 1
    check_parse(data)


def load_everything(root: Path, data: bytes) -> None:
    """Open the file in a store and use it as the app would; only typed errors allowed."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for old in sessions.iterdir():
        old.unlink()
    (root / "index.json").unlink(missing_ok=True)
    path = sessions / f"{SID}.jsonl"
    path.write_bytes(data)
    store = SessionStore(JsonlBackend(root))
    try:
        (row,) = store.list()
        assert row.id == SID
        session = outcome(store.get, SID)
        if isinstance(session, Refused):
            assert row.error is not None
            assert row.error["code"] == session.code
        else:
            assert row.error is None
            assert row.events == session.last_seq
            session.replay()
            for m in session.replay().messages:
                m.to_dict()
            # what the host and the CLI send: events inside a JSON-RPC result, the header too
            for e in session.events:
                orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"events": [e.to_record()]}})
            orjson.dumps({"result": {"header": session.header.to_record(), "events": []}})
            child = outcome(store.fork, SID, child_id="child")
            if not isinstance(child, Refused):
                assert store.get("child").replay().transcript == child.replay().transcript
    finally:
        store.close()
    assert path.read_bytes() == data


@examples(150, 20_000)
@given(mangled())
def test_a_store_loads_or_refuses_and_never_modifies_the_file(scratch: Path, data: bytes) -> None:
    CASES["store"] += 1
    load_everything(scratch / "store", data)


@pytest.mark.parametrize("depth", [253, 254, 255, 1000, 1024, 1025, 100_000])
def test_deep_nesting_anywhere(tmp_path: Path, depth: int) -> None:
    """Deep JSON in an event, a tool output and the header: loads usable, or refused."""
    turn = [{"type": "turn/start", "turn": "D"},
            {"type": "message", "turn": "D", "id": "assistant:d:1", "role": "assistant",
             "parts": [{"type": "tool_call", "id": "c", "name": "n", "args": {}}]}]  # fmt: skip
    lines = [header_line(SID), *(e.encode() for e in events_of(turn))]
    lines.append(
        b'{"seq":3,"type":"tool/result","ts":"x","turn":"D","call":"c","tool":"n","output":'
        + nested(depth)
        + b"}"
    )
    lines.append(b'{"seq":4,"type":"turn/end","ts":"x","turn":"D","status":"completed"}')
    lines.append(b'{"seq":5,"type":"plugin/deep","ts":"x","v":' + nested(depth) + b"}")
    load_everything(tmp_path, b"\n".join(lines) + b"\n")
    deep_header = header_line(SID)[:-1] + b',"x":' + nested(depth) + b"}\n"
    load_everything(tmp_path, deep_header)


@pytest.mark.parametrize(("depth", "loads"), [(200, True), (201, False), (5000, False)])
def test_the_nesting_limit_is_the_same_for_the_writer_and_the_reader(
    tmp_path: Path, depth: int, loads: bool
) -> None:
    """An append the reader would refuse is refused when it is made, not after a restart."""
    value: object = []
    for _ in range(depth - 2):  # the record is a level, the innermost [] one more
        value = [value]
    store = SessionStore(JsonlBackend(tmp_path))
    store.create(SID)
    appended = outcome(store.append, SID, [{"type": "plugin/deep", "v": value}])
    assert (appended == Refused("invalid-event")) is not loads
    store.close()
    path = tmp_path / "sessions" / f"{SID}.jsonl"
    lines = path.read_bytes().splitlines()
    assert len(lines) == (2 if loads else 1)
    # the same line written by hand: the reader agrees
    line = b'{"seq":1,"type":"plugin/deep","ts":"x","v":' + nested(depth - 1) + b"}"
    path.write_bytes(lines[0] + b"\n" + line + b"\n")
    store = SessionStore(JsonlBackend(tmp_path))
    got = outcome(store.get, SID)
    assert (got == Refused("corrupt-log")) is not loads
    if loads:
        assert got.last_seq == 1
    store.close()


def follow_mangled(root: Path, data: bytes) -> None:
    """Another program replaces a session the store has loaded with `data`; following the
    disk (what the store watcher makes the host do) gives only typed errors, never changes
    the file, and leaves a store that reads it exactly as a fresh one would."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for old in sessions.iterdir():
        old.unlink()
    (root / "index.json").unlink(missing_ok=True)
    store = SessionStore(JsonlBackend(root))
    try:
        store.create(SID)
        store.append(SID, [{"type": "session/title", "title": "before"}])
        path = sessions / f"{SID}.jsonl"
        path.write_bytes(data)
        change = outcome(store.follow_disk, SID, True)
        assert isinstance(change, DiskChange | Refused), change  # seen as changed: ctime moved
        assert path.read_bytes() == data
        fresh = SessionStore(JsonlBackend(root, writable=False))
        try:
            want, got = outcome(fresh.get, SID), outcome(store.get, SID)
            if isinstance(want, Refused):
                assert got == want
                (row,) = store.list()
                assert row.error is not None
            else:
                assert [e.encode() for e in got.events] == [e.encode() for e in want.events]
        finally:
            fresh.close()
    finally:
        store.close()
    assert path.read_bytes() == data


@examples(100, 10_000)
@given(mangled())
def test_following_a_mangled_file_on_disk_refuses_or_reads_it(scratch: Path, data: bytes) -> None:
    CASES["follow"] = CASES.get("follow", 0) + 1
    follow_mangled(scratch / "follow", data)
