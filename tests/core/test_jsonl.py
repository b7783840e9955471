"""The JSON Lines backend: the on-disk format, torn tails, corrupt lines, locks, the index."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from logdata import (
    SAMPLE,
    Refused,
    events_of,
    file_bytes,
    header_line,
    message,
    outcome,
    tree,
    turn,
)

from forkwise.core.errors import ForkwiseError
from forkwise.core.store import checked_log
from forkwise.core.store.backends import jsonl_fork
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.session import INDEX_ROW_KEYS, SessionSummary
from forkwise.core.store.session_store import SessionStore

HAND = """\
{"type":"session","version":1,"id":"hand","created":"2026-01-01T00:00:00Z","cwd":"/home/p/proj","parentSession":null,"seedLength":0,"meta":{"title":"by hand"}}
{"seq":1,"type":"model/select","ts":"2026-01-01T00:00:01Z","provider":"offline","model":"echo-1"}
{"seq": 2, "type": "turn/start", "ts": "2026-01-01T00:00:02Z", "turn": "T1"}
{"seq":3,"type":"message","ts":"2026-01-01T00:00:03Z","turn":"T1","id":"user:hello:0001","role":"user","parts":[{"type":"text","text":"hello"}]}
{"seq":4,"type":"message","ts":"2026-01-01T00:00:04Z","turn":"T1","id":"assistant:hi:0002","role":"assistant","parts":[{"type":"reasoning","text":"greet"},{"type":"text","text":"hi there"}]}
{"seq":5,"type":"turn/end","ts":"2026-01-01T00:00:05Z","turn":"T1","status":"completed"}
{"seq":6,"type":"plugin/notes/pin","ts":"2026-01-01T00:00:06Z",  "z":1, "a":{"deep":[1,2.50,"\\u00e9"]}, "note":"keep"}
{"seq":7,"type":"something/from/the/future","ts":"2026-01-01T00:00:07Z","payload":{"x":null}}
"""


def sessions(root: Path) -> Path:
    return root / "sessions"


def put(root: Path, sid: str, data: bytes | str) -> Path:
    sessions(root).mkdir(parents=True, exist_ok=True)
    path = sessions(root) / f"{sid}.jsonl"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.fixture
def store(jsonl_root: Path) -> Iterator[SessionStore]:
    s = SessionStore(JsonlBackend(jsonl_root))
    yield s
    s.close()


def opened(root: Path) -> SessionStore:
    return SessionStore(JsonlBackend(root))


# --- the format -------------------------------------------------------------------------


def test_a_hand_written_file_loads_forks_and_lists(jsonl_root: Path) -> None:
    path = put(jsonl_root, "hand", HAND)
    store = opened(jsonl_root)
    (row,) = store.list()
    assert (row.id, row.title, row.events, row.turns, row.messages) == ("hand", "by hand", 7, 1, 2)
    assert row.model == "echo-1"
    s = store.get("hand")
    assert s.header.cwd == "/home/p/proj"
    assert [e.type for e in s.events][-2:] == ["plugin/notes/pin", "something/from/the/future"]
    assert [m.text for m in s.replay().messages] == ["hello", "hi there"]
    child = store.fork("hand", 7, "child")
    assert child.header.cwd == "/home/p/proj"
    store.close()
    assert path.read_text() == HAND
    child_lines = (sessions(jsonl_root) / "child.jsonl").read_bytes().splitlines()
    # the copied prefix is the hand-written bytes, spacing and key order included
    assert child_lines[1:8] == HAND.encode().splitlines()[1:]
    header = orjson.loads(child_lines[0])
    assert header == {
        "type": "session",
        "version": 1,
        "id": "child",
        "created": header["created"],
        "cwd": "/home/p/proj",
        "parentSession": "hand",
        "seedLength": 7,
        "meta": {},
    }
    assert orjson.loads(child_lines[8])["type"] == "history/fork"
    assert len(child_lines) == 9


def test_unknown_event_types_round_trip_byte_identical(jsonl_root: Path) -> None:
    put(jsonl_root, "hand", HAND)
    store = opened(jsonl_root)
    store.append("hand", [{"type": "plugin/new/kind", "odd": {"k": [1, {"n": None}]}}])
    store.truncate("hand", 7)  # a rewrite keeps the lines it keeps as they were
    store.close()
    store = opened(jsonl_root)
    lines = (sessions(jsonl_root) / "hand.jsonl").read_bytes().splitlines()
    assert lines == HAND.encode().splitlines()
    unknown = store.get("hand").events[6]
    assert unknown.type == "something/from/the/future"
    assert dict(unknown.fields) == {"payload": {"x": None}}
    store.close()


def test_the_header_and_seed_are_written_once(store: SessionStore, jsonl_root: Path) -> None:
    store.create("src", cwd="/p")
    store.append("src", SAMPLE)
    src_path = sessions(jsonl_root) / "src.jsonl"
    first = src_path.read_bytes()
    store.append("src", turn("t9"))
    after = src_path.read_bytes()
    assert after.startswith(first)  # appends only add lines; the header is never rewritten
    assert after.count(b'"type":"session"') == 1
    store.fork("src", 13, "child")
    store.append("child", turn("c1"))
    lines = (sessions(jsonl_root) / "child.jsonl").read_bytes().splitlines()
    assert [orjson.loads(line).get("seq") for line in lines] == [None, *range(1, 19)]
    assert lines[1:14] == src_path.read_bytes().splitlines()[1:14]
    assert sum(b'"type":"session"' in line for line in lines) == 1


def test_file_and_directory_modes(jsonl_root: Path) -> None:
    old = os.umask(0)  # the modes must come from the store, not from a friendly umask
    try:
        store = opened(jsonl_root)
        store.create("a")
        store.append("a", turn("t1"))
        store.fork("a", child_id="b")
        store.truncate("b", 0)
        store.list()
        store.close()
        put(jsonl_root, "torn", file_bytes("torn", events_of(turn("t1"))) + b'{"seq":5,')
        os.chmod(sessions(jsonl_root) / "torn.jsonl", 0o600)
        store = opened(jsonl_root)
        store.append("torn", turn("t2"))
        store.delete("a")
        store.close()
    finally:
        os.umask(old)
    for d in ("", "sessions", "recovered", "trash"):
        assert stat.S_IMODE((jsonl_root / d).stat().st_mode) == 0o700, d
    files = list(tree(jsonl_root, skip=()))
    assert {"index.json", "writer.lock", "sessions/b.jsonl"} <= set(files)
    assert any(f.startswith("recovered/") for f in files)
    assert any(f.startswith("trash/") for f in files)
    for rel in files:
        assert stat.S_IMODE((jsonl_root / rel).stat().st_mode) == 0o600, rel


def test_no_temporary_files_are_left_behind(store: SessionStore, jsonl_root: Path) -> None:
    store.create("a")
    store.append("a", SAMPLE)
    store.fork("a", 13, "b")
    store.truncate("a", 12)
    store.list()
    store.close()
    assert sorted(tree(jsonl_root)) == [
        "index-head.json", "index-log.json", "index.json", "sessions/a.jsonl", "sessions/b.jsonl"
    ]  # fmt: skip


def test_stray_files_are_not_sessions(jsonl_root: Path) -> None:
    put(jsonl_root, "good", file_bytes("good", []))
    (sessions(jsonl_root) / ".good.jsonl.1234.tmp").write_bytes(b"half")
    (sessions(jsonl_root) / "notes.txt").write_bytes(b"x")
    (sessions(jsonl_root) / ".hidden.jsonl").write_bytes(b"x")
    store = opened(jsonl_root)
    assert store.ids() == ["good"]
    assert [s.id for s in store.list()] == ["good"]
    store.close()


# --- torn last line ----------------------------------------------------------------------


TORN = b'{"seq":5,"type":"message","ts":"2026-01-01T00:00:0'


def torn_file(root: Path, sid: str = "s", tail: bytes = TORN) -> tuple[Path, bytes]:
    data = file_bytes(sid, events_of(turn("t1"))) + tail
    return put(root, sid, data), data


@pytest.mark.parametrize(
    "tail", [TORN, b"{", b'{"seq":5,"type":"tu\xc3', b"\xff\xfe", b'{"seq":5}  \t{"x']
)
def test_a_torn_last_line_leaves_the_session_usable(jsonl_root: Path, tail: bytes) -> None:
    path, data = torn_file(jsonl_root, tail=tail)
    store = opened(jsonl_root)
    (row,) = store.list()
    assert row.error is None
    assert row.events == 4
    s = store.get("s")
    assert s.last_seq == 4
    assert store.torn_tail("s") == tail
    assert s.replay().messages[-1].text == "it says hello"
    store.fork("s", child_id="c")  # forking reads the source, it does not repair it
    assert path.read_bytes() == data
    store.close()
    assert path.read_bytes() == data  # reading, listing and closing modify nothing
    assert not (jsonl_root / "recovered").exists()


def test_the_next_append_sets_the_torn_tail_aside(jsonl_root: Path) -> None:
    path, data = torn_file(jsonl_root)
    store = opened(jsonl_root)
    appended = store.append("s", turn("t2"))
    assert [e.seq for e in appended] == [5, 6, 7, 8]
    assert store.torn_tail("s") is None
    store.close()
    (kept,) = (jsonl_root / "recovered").iterdir()
    assert kept.name.startswith("s.")
    assert kept.read_bytes() == TORN
    good = data[: -len(TORN)]
    assert path.read_bytes() == good + b"".join(e.encode() + b"\n" for e in appended)
    store = opened(jsonl_root)
    assert store.get("s").last_seq == 8
    assert store.torn_tail("s") is None
    store.close()


def test_truncate_keeps_a_torn_tail_where_a_person_can_find_it(jsonl_root: Path) -> None:
    path, _ = torn_file(jsonl_root)
    store = opened(jsonl_root)
    store.truncate("s", 0)
    assert store.torn_tail("s") is None
    store.close()
    kept = list((jsonl_root / "recovered").iterdir()) if (jsonl_root / "recovered").exists() else []
    assert [k.read_bytes() for k in kept] == [TORN]
    assert path.read_bytes() == header_line("s") + b"\n"


def test_delete_keeps_a_torn_tail_in_the_trash(jsonl_root: Path) -> None:
    _, data = torn_file(jsonl_root)
    store = opened(jsonl_root)
    store.delete("s")
    store.close()
    (trashed,) = (jsonl_root / "trash").iterdir()
    assert trashed.read_bytes() == data


def test_a_file_without_a_final_newline_appends_correctly(jsonl_root: Path) -> None:
    data = file_bytes("s", events_of(turn("t1"))).rstrip(b"\n")
    path = put(jsonl_root, "s", data)
    store = opened(jsonl_root)
    assert store.torn_tail("s") is None
    assert store.get("s").last_seq == 4
    assert path.read_bytes() == data
    appended = store.append("s", turn("t2"))
    store.append("s", [{"type": "plugin/a/b"}])
    store.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert b"\n".join(lines[:5]) == data
    assert lines[5] == appended[0].encode()
    store = opened(jsonl_root)
    assert [e.seq for e in store.get("s").events] == list(range(1, 10))
    store.close()


def test_a_header_only_file_without_newline(jsonl_root: Path) -> None:
    put(jsonl_root, "s", header_line("s"))
    store = opened(jsonl_root)
    store.append("s", turn("t1"))
    store.close()
    store = opened(jsonl_root)
    assert store.get("s").last_seq == 4
    store.close()


# --- corrupt files ---------------------------------------------------------------------------


def corrupt_cases() -> list[tuple[str, bytes, int]]:
    """(name, file bytes, line the error must name)."""
    ev = events_of(turn("t1"))
    head = header_line("s")
    lines = [e.encode() for e in ev]

    def f(*body: bytes) -> bytes:
        return b"\n".join([head, *body]) + b"\n"

    return [
        ("garbage-middle", f(lines[0], b"not json at all", *lines[1:]), 3),
        ("torn-middle", f(lines[0], lines[1][:20], *lines[2:]), 3),
        ("complete-last-line-bad", f(*lines[:3], b'{"seq":4,'), 5),
        ("duplicate-seq", f(lines[0], lines[1], lines[1], *lines[2:]), 4),
        ("missing-seq", f(lines[0], *lines[2:]), 3),
        ("seq-zero", f(b'{"seq":0,"type":"plugin/a","ts":"x"}'), 2),
        ("seq-string", f(b'{"seq":"1","type":"plugin/a","ts":"x"}'), 2),
        ("seq-bool", f(b'{"seq":true,"type":"plugin/a","ts":"x"}'), 2),
        ("no-ts", f(b'{"seq":1,"type":"plugin/a"}'), 2),
        ("not-an-object", f(b"[1,2,3]"), 2),
        ("bad-bracket", f(lines[1]), 2),
        ("bad-role", f(lines[0], lines[1].replace(b'"user"', b'"robot"'), *lines[2:]), 3),
        ("invalid-utf8", f(lines[0], b'{"seq":2,"type":"plugin/\xff","ts":"x"}'), 3),
        ("no-header", b"\n".join(lines) + b"\n", 1),
        ("header-not-json", f(*lines).replace(head, b"{oops"), 1),
        ("header-wrong-type", f(*lines).replace(b'"type":"session"', b'"type":"sesion"'), 1),
        ("header-no-version", f(*lines).replace(b'"version":1,', b""), 1),
        ("header-wrong-id", f(*lines).replace(b'"id":"s"', b'"id":"other"'), 1),
        ("seed-too-long", f(*lines).replace(b'"seedLength":0', b'"seedLength":9'), 1),
        ("empty", b"", 1),
    ]


@pytest.mark.parametrize(
    ("name", "data", "line"), corrupt_cases(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_corrupt_file_names_file_and_line_and_is_unchanged(
    jsonl_root: Path, name: str, data: bytes, line: int
) -> None:
    path = put(jsonl_root, "s", data)
    put(jsonl_root, "fine", file_bytes("fine", events_of(turn("t1"))))
    store = opened(jsonl_root)
    with pytest.raises(ForkwiseError) as exc:
        store.get("s")
    assert exc.value.code == "corrupt-log", exc.value
    assert exc.value.details["path"] == str(path)
    assert exc.value.details["line"] == line
    assert str(path) in str(exc.value)
    assert f"line {line}" in str(exc.value) or line == 1
    for attempt in (
        lambda: store.fork("s"),
        lambda: store.append("s", turn("t2")),
        lambda: store.truncate("s", 0),
    ):
        with pytest.raises(ForkwiseError) as again:
            attempt()
        assert again.value.code == "corrupt-log"
    # the rest of the store keeps working
    rows = {r.id: r for r in store.list()}
    assert rows["fine"].error is None
    assert rows["s"].error is not None
    assert rows["s"].error["code"] == "corrupt-log"
    assert store.fork("fine").header.seed_length == 4
    store.close()
    assert path.read_bytes() == data


def test_a_newer_format_is_refused_with_its_own_code(jsonl_root: Path) -> None:
    data = file_bytes("s", [], version=2)
    path = put(jsonl_root, "s", data)
    store = opened(jsonl_root)
    with pytest.raises(ForkwiseError) as exc:
        store.get("s")
    assert exc.value.code == "unsupported-version"
    (row,) = store.list()
    assert row.error is not None
    assert row.error["code"] == "unsupported-version"
    store.close()
    assert path.read_bytes() == data


def test_parse_log_reports_the_torn_tail() -> None:
    data = file_bytes("s", events_of(turn("t1"))) + TORN
    loaded, header_raw, _tail = parse_log(data, "s.jsonl")
    assert loaded.torn_tail == TORN
    assert header_raw == header_line("s")
    assert len(loaded.events) == 4


# --- the writer lock -----------------------------------------------------------------------


def test_a_second_writer_is_refused(store: SessionStore, jsonl_root: Path) -> None:
    store.create("a")
    with pytest.raises(ForkwiseError) as exc:
        JsonlBackend(jsonl_root)
    assert exc.value.code == "store-busy"
    reader = SessionStore(JsonlBackend(jsonl_root, writable=False))
    assert reader.ids() == ["a"]
    before = tree(jsonl_root)
    for attempt in (
        lambda: reader.create("b"),
        lambda: reader.append("a", turn("t1")),
        lambda: reader.fork("a"),
        lambda: reader.delete("a"),
    ):
        with pytest.raises(ForkwiseError) as refused:
            attempt()
        assert refused.value.code == "read-only-store"
    reader.list()
    reader.close()
    assert tree(jsonl_root) == before
    store.append("a", turn("t1"))  # the writer is unaffected


def test_the_lock_is_released_on_close(jsonl_root: Path) -> None:
    first = opened(jsonl_root)
    first.close()
    second = opened(jsonl_root)
    second.create("x")
    second.close()


# --- the catalogue index ---------------------------------------------------------------------


def summary_rows(store: SessionStore) -> dict[str, tuple[object, ...]]:
    return {
        s.id: (s.events, s.turns, s.messages, s.title, s.running, s.error) for s in store.list()
    }


def prepared(root: Path) -> dict[str, tuple[object, ...]]:
    store = opened(root)
    store.create("a", meta={"title": "A"})
    store.append("a", SAMPLE)
    store.fork("a", 13, "b")
    store.close()
    store = opened(root)
    rows = summary_rows(store)
    store.close()
    assert (root / "index.json").exists()
    return rows


def test_the_index_is_rebuilt_when_missing(jsonl_root: Path) -> None:
    want = prepared(jsonl_root)
    (jsonl_root / "index.json").unlink()
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    store.close()
    assert set(orjson.loads((jsonl_root / "index.json").read_bytes())["sessions"]) == {"a", "b"}


@pytest.mark.parametrize(
    "index",
    [
        b"",
        b"\x00\xff garbage",
        b'{"version":1,"sessions":',
        b"[]",
        b'{"version":99,"sessions":{}}',
        b'{"version":1,"sessions":[1,2]}',
        b'{"version":1,"sessions":{"a":5,"b":"x"}}',
        b'{"version":1,"sessions":{"a":{"size":"x"},"b":{"summary":[]}}}',
        b'{"version":1,"sessions":null}',
    ],
)
def test_a_corrupt_index_is_rebuilt(jsonl_root: Path, index: bytes) -> None:
    want = prepared(jsonl_root)
    (jsonl_root / "index.json").write_bytes(index)
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    store.close()
    store = opened(jsonl_root)  # and what it saved is good
    assert summary_rows(store) == want
    store.close()


@pytest.mark.parametrize("other", [{"id": "b"}, ["b"], "b", None])
def test_an_index_entry_with_wrong_types_is_not_trusted(jsonl_root: Path, other: object) -> None:
    want = prepared(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    index["sessions"]["a"]["summary"][INDEX_ROW_KEYS.index("events")] = "many"
    index["sessions"]["b"]["summary"] = other
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    store.close()


def test_a_stale_index_is_never_trusted_over_the_logs(jsonl_root: Path) -> None:
    prepared(jsonl_root)
    # another writer (here: a hand edit) changes a log after the index was written
    path = sessions(jsonl_root) / "b.jsonl"
    with path.open("ab") as fh:
        fh.write(b"\n".join(e.encode() for e in events_of(turn("x1"), start=15)) + b"\n")
    put(jsonl_root, "new", file_bytes("new", events_of(turn("n1"))))
    (sessions(jsonl_root) / "a.jsonl").unlink()
    store = opened(jsonl_root)
    rows = summary_rows(store)
    assert set(rows) == {"b", "new"}
    assert rows["b"][:3] == (18, 2, 5)
    assert rows["new"][:3] == (4, 1, 2)
    store.close()


def test_list_shows_an_unreadable_session_with_its_error(jsonl_root: Path) -> None:
    prepared(jsonl_root)
    bad = put(
        jsonl_root, "bad", file_bytes("bad", events_of(turn("t1"))).replace(b'"seq":3', b'"seq":7')
    )
    store = opened(jsonl_root)
    rows = {s.id: s for s in store.list()}
    assert set(rows) == {"a", "b", "bad"}
    assert rows["a"].error is None
    assert rows["a"].events == 22
    assert rows["bad"].error is not None
    assert rows["bad"].error["code"] == "corrupt-log"
    assert "line 4" in rows["bad"].error["message"]
    assert rows["bad"].to_dict()["error"]["code"] == "corrupt-log"
    store.close()
    # once fixed, the session lists normally (the cached error is not trusted either)
    bad.write_bytes(file_bytes("bad", events_of(turn("t1"))))
    store = opened(jsonl_root)
    rows = {s.id: s for s in store.list()}
    assert rows["bad"].error is None
    assert rows["bad"].events == 4
    store.close()


def test_an_index_entry_for_another_id_is_not_trusted(jsonl_root: Path) -> None:
    want = prepared(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    index["sessions"]["a"]["summary"][INDEX_ROW_KEYS.index("id")] = "zzz"
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    store.close()


def test_writer_clears_what_a_crash_left_beside_the_logs(tmp_path: Path) -> None:
    store = SessionStore(JsonlBackend(tmp_path))
    store.create("kept")
    store.close()
    sessions = tmp_path / "sessions"
    (sessions / ".kept.jsonl.1a2b3c4d.tmp").write_bytes(b"half a file")
    (tmp_path / ".index.json.0badcafe.tmp").write_bytes(b"{")
    (sessions / ".kept.jsonl.5e6f7a8b.old").write_bytes(b"the version before a rewrite")
    reader = SessionStore(JsonlBackend(tmp_path, writable=False))
    assert (sessions / ".kept.jsonl.1a2b3c4d.tmp").exists()  # readers change nothing
    reader.close()
    store = SessionStore(JsonlBackend(tmp_path))
    assert sorted(p.name for p in sessions.iterdir()) == ["kept.jsonl"]
    assert not (tmp_path / ".index.json.0badcafe.tmp").exists()
    moved = tmp_path / "recovered" / "kept.jsonl.5e6f7a8b.old"
    assert moved.read_bytes() == b"the version before a rewrite"
    assert [s.id for s in store.list()] == ["kept"]
    store.close()


def test_fork_copies_the_seed_bytes_from_the_source_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[int] = []
    real_copy = jsonl_fork.copy_range

    def counting(src: int, dst: int, offset: int, count: int) -> None:
        copies.append(count)
        real_copy(src, dst, offset, count)

    monkeypatch.setattr(jsonl_fork, "copy_range", counting)
    store = SessionStore(JsonlBackend(tmp_path))
    sample_events = events_of(SAMPLE)
    store.create("src", sample_events)
    child = store.fork("src", 13)
    source = (tmp_path / "sessions" / "src.jsonl").read_bytes().splitlines()
    copied = (tmp_path / "sessions" / f"{child.id}.jsonl").read_bytes().splitlines()
    assert copies == [sum(len(line) + 1 for line in source[1:14])]
    assert copied[1:14] == source[1:14]
    assert orjson.loads(copied[14])["type"] == "history/fork"
    assert len(copied) == 15
    store.close()
    reopened = SessionStore(JsonlBackend(tmp_path))
    assert reopened.get(child.id).events[:13] == tuple(sample_events[:13])
    reopened.close()


def test_fork_of_a_hand_laid_out_file_encodes_the_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blank lines or a missing final newline: the byte range would be wrong, so the seed
    is written event by event instead, and the child is a clean file."""
    monkeypatch.setattr(jsonl_fork, "copy_range", lambda *a: pytest.fail("must not copy"))
    events = events_of(SAMPLE)
    lines = file_bytes("hand", events).splitlines()
    lines.insert(3, b"")  # a blank line a person left in
    sessions = tmp_path / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "hand.jsonl").write_bytes(b"\n".join(lines))  # and no final newline
    store = SessionStore(JsonlBackend(tmp_path))
    store.fork("hand", 13, "kid")
    written = (sessions / "kid.jsonl").read_bytes().splitlines()
    assert b"" not in written
    assert [orjson.loads(x)["seq"] for x in written[1:]] == list(range(1, 15))
    assert store.get("kid").events[:13] == store.get("hand").events[:13]
    store.close()


# --- loading a log the index vouches for ------------------------------------------------


def unchecked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the lines the loader checks one by one."""
    calls: list[int] = []
    real = checked_log.check_record

    def counting(record: dict[str, object], raw: bytes | None = None) -> tuple[int, str]:
        calls.append(1)
        return real(record, raw)

    monkeypatch.setattr(checked_log, "check_record", counting)
    return calls


def written(root: Path) -> list[bytes]:
    store = opened(root)
    store.create("a", meta={"title": "A"})
    store.append("a", SAMPLE)
    lines = [e.encode() for e in store.get("a").events]
    store.close()
    return lines


def test_a_log_the_index_vouches_for_is_loaded_without_checking_each_line(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = written(jsonl_root)
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    snap = store.get("a")
    assert [e.encode() for e in snap.events] == lines
    assert checks == []
    assert store.summary("a") == opened_summary(jsonl_root, "a")
    store.close()


def test_summaries_kept_as_objects_by_an_older_index_are_still_listed_from_it(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = prepared(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    for entry in index["sessions"].values():
        assert type(entry["summary"]) is list
        entry["summary"] = SessionSummary.from_index_row(entry["summary"]).to_index()
        del entry["summary"]["usage"], entry["usage"]  # kept by neither then
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    store.close()
    # such an index kept no usage: the first listing read each log once for it (its
    # summaries still the index's), and the index keeps it from then on
    entries = orjson.loads((jsonl_root / "index.json").read_bytes())["sessions"]
    assert all("usage" in entry for entry in entries.values())
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert summary_rows(store) == want
    assert checks == []
    store.close()


def test_log_facts_are_kept_apart_from_the_index_as_json_text(jsonl_root: Path) -> None:
    """A listing decodes the whole index but needs no log facts: they are in a file of
    their own (each record with the size and mtime of its log) and stay text until a load
    of that session decodes them."""
    written(jsonl_root)
    entry = orjson.loads((jsonl_root / "index.json").read_bytes())["sessions"]["a"]
    assert "log" not in entry
    record = orjson.loads((jsonl_root / "index-log.json").read_bytes())["logs"]["a"]
    assert (record["size"], record["mtime"]) == (entry["size"], entry["mtime"])
    assert type(record["log"]) is str
    events = entry["summary"][INDEX_ROW_KEYS.index("events")]
    assert orjson.loads(record["log"])["events"] == events


@pytest.mark.parametrize("as_text", [True, False], ids=["text", "object"])
def test_log_facts_kept_in_the_entries_of_an_older_index_are_still_used(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch, as_text: bool
) -> None:
    lines = written(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    record = orjson.loads((jsonl_root / "index-log.json").read_bytes())["logs"]["a"]
    facts = orjson.loads(record["log"])
    index["sessions"]["a"]["log"] = orjson.dumps(facts).decode() if as_text else facts
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    (jsonl_root / "index-log.json").unlink()
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("a").events] == lines
    assert checks == []
    store.close()


def test_an_older_indexs_log_facts_move_to_their_own_file_on_the_next_save(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = written(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    record = orjson.loads((jsonl_root / "index-log.json").read_bytes())["logs"]["a"]
    index["sessions"]["a"]["log"] = record["log"]
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    (jsonl_root / "index-log.json").unlink()
    store = opened(jsonl_root)
    store.create("other")  # a change: the index is saved
    store.list()
    store.close()
    entry = orjson.loads((jsonl_root / "index.json").read_bytes())["sessions"]["a"]
    assert "log" not in entry
    moved = orjson.loads((jsonl_root / "index-log.json").read_bytes())["logs"]["a"]
    assert moved == record
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("a").events] == lines
    assert checks == []
    store.close()


def test_log_facts_that_do_not_match_their_log_are_not_taken(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts' record is checked against its log on its own: an index entry that
    matches does not vouch for facts recorded for another size or mtime."""
    lines = written(jsonl_root)
    logs = orjson.loads((jsonl_root / "index-log.json").read_bytes())
    logs["logs"]["a"]["mtime"] += 1
    (jsonl_root / "index-log.json").write_bytes(orjson.dumps(logs))
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("a").events] == lines
    assert len(checks) == len(lines)  # every line checked
    store.close()


def opened_summary(root: Path, sid: str) -> object:
    """The summary a full check of the file gives."""
    loaded, _, _ = parse_log((sessions(root) / f"{sid}.jsonl").read_bytes(), sid)
    return loaded.summary


def test_a_changed_log_is_checked_line_by_line_again(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = written(jsonl_root)
    path = sessions(jsonl_root) / "a.jsonl"
    with path.open("ab") as fh:
        fh.write(b"\n".join(e.encode() for e in events_of(turn("x1"), start=len(lines) + 1)))
        fh.write(b"\n")
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert store.last_seq("a") == len(lines) + 4
    assert len(checks) == len(lines) + 4
    store.close()


@pytest.mark.parametrize(
    "facts",
    [
        None,
        "x",
        '{"events": 13',
        '"x"',
        {"events": "13"},
        {"events": 13, "openTurn": 5, "openTurnSeq": 0, "approvals": {}},
    ],
)
def test_malformed_log_facts_in_the_index_send_the_loader_to_the_lines(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch, facts: object
) -> None:
    lines = written(jsonl_root)
    index = orjson.loads((jsonl_root / "index.json").read_bytes())
    index["sessions"]["a"]["log"] = facts
    (jsonl_root / "index.json").write_bytes(orjson.dumps(index))
    checks = unchecked(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("a").events] == lines
    assert len(checks) == len(lines)
    store.close()


def test_an_edit_that_keeps_size_and_mtime_surfaces_when_the_event_is_read(
    jsonl_root: Path,
) -> None:
    """The trust the index gets, and its limit: size and mtime are all it compares."""
    written(jsonl_root)
    path = sessions(jsonl_root) / "a.jsonl"
    st = path.stat()
    data = path.read_bytes().split(b"\n")
    data[3] = b"#" * len(data[3])  # same length, no longer JSON
    path.write_bytes(b"\n".join(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    store = opened(jsonl_root)
    snap = store.get("a")
    assert snap.events[0].seq == 1
    with pytest.raises(ForkwiseError) as caught:
        snap.events[2]
    assert caught.value.code == "corrupt-log"
    store.close()


def probes(store: SessionStore) -> list[object]:
    """What the store allows next on session "open" (its bracket state, tested)."""
    return [
        outcome(store.append, "open", [{"type": "turn/start", "turn": "T9"}]),
        outcome(store.append, "open", [message("T9", "user", "user:T1:q", "dup")]),
        outcome(store.append, "open", [message("T2", "user", "user:T1:q", "dup id")]),
        outcome(
            store.append,
            "open",
            [{"type": "approval/resolve", "turn": "T2", "approval": "ap-T2", "decision": "deny"}],
        ),
        outcome(store.append, "open", [message("T2", "assistant", "assistant:T2:z", "fine")]),
        outcome(store.append, "open", [{"type": "turn/end", "turn": "T2", "status": "completed"}]),
        outcome(store.append, "open", [message("T2", "user", "user:late", "late")]),
    ]


def test_bracket_state_from_the_index_allows_exactly_what_a_full_check_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafts = [*turn("T1"), *turn("T2", tool=True, open_=True)]
    drafts = [
        *drafts[:-2],
        {"type": "approval/request", "turn": "T2", "approval": "ap-T2", "call": "c", "tool": "r"},
    ]
    results = []
    for keep_index in (True, False):
        root = tmp_path / str(keep_index)
        store = opened(root)
        store.create("open")
        store.append("open", drafts)
        store.close()
        if not keep_index:
            (root / "index.json").unlink()
        checks = unchecked(monkeypatch)
        store = opened(root)
        results.append(
            [type(r).__name__ if not isinstance(r, Refused) else r for r in probes(store)]
        )
        # an open turn would refuse writes: it is confirmed against the log even when the
        # index has it (issue 18, item 9), so every line is checked either way
        assert checks != []
        store.close()
        monkeypatch.undo()
    trusted, full = results
    refused, done = Refused("invalid-event"), "tuple"
    assert full == [refused, refused, refused, done, done, done, refused]
    assert trusted == full


def test_a_fork_of_a_vouched_log_copies_its_lines(jsonl_root: Path) -> None:
    lines = written(jsonl_root)
    store = opened(jsonl_root)
    child = store.fork("a", len(lines), "kid")
    store.close()
    kid = (sessions(jsonl_root) / "kid.jsonl").read_bytes().split(b"\n")
    assert kid[1 : len(lines) + 1] == lines
    reopened = opened(jsonl_root)
    assert reopened.get("kid").events == child.events
    assert reopened.summary("kid").title == "sample"  # set by an event the seed holds
    reopened.close()
