"""A fork at the last completed turn made from the summary index (the source not read) is
the fork made from the log: the same child bytes, summary, listing and index facts.

Every case runs the CLI fork on two copies of one store: one with the index a listing
left, one with the index dropped (every line checked). Where the index vouches for the
fork point, the first must not load the source at all; everywhere else it falls back.
A log that ends in a turn a crash left open is read either way: the host that forks it
closes that turn first, and both copies then fork the same closed log.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from logdata import SAMPLE, events_of, file_bytes, message, turn, waiting

from forkwise.core.cli import main as cli
from forkwise.core.log import events as events_module
from forkwise.core.store import appending as appending_module
from forkwise.core.store import forking as forking_module
from forkwise.core.store import session_store as store_module
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.session_store import SessionStore

NOW = "2026-02-02T02:02:02.000Z"
Writer = Callable[[Path], None]


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both forks get the same timestamps, so that their bytes can be compared."""
    monkeypatch.setattr(store_module, "now_ts", lambda: NOW)
    monkeypatch.setattr(events_module, "now_ts", lambda: NOW)
    monkeypatch.setattr(appending_module, "now_ts", lambda: NOW)  # an append's ts
    monkeypatch.setattr(forking_module, "now_ts", lambda: NOW)  # a fork's header


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sessions the JSONL backend reads from their files."""
    seen: list[str] = []
    real = JsonlBackend.load

    def counting(self: JsonlBackend, session_id: str) -> Any:
        seen.append(session_id)
        return real(self, session_id)

    monkeypatch.setattr(JsonlBackend, "load", counting)
    return seen


def put(root: Path, sid: str, data: bytes) -> None:
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    (root / "sessions" / f"{sid}.jsonl").write_bytes(data)


def listed(root: Path) -> list[dict[str, Any]]:
    store = SessionStore(JsonlBackend(root, writable=False))
    try:
        return [s.to_dict() for s in store.list()]
    finally:
        store.close()


def index_entry(root: Path, sid: str) -> dict[str, Any]:
    """The index entry of `sid` with its log facts (kept as text in `index-log.json`)."""
    entries: dict[str, dict[str, Any]] = orjson.loads((root / "index.json").read_bytes())[
        "sessions"
    ]
    record = log_records(root)[sid]
    entry = entries[sid]
    assert (record["size"], record["mtime"]) == (entry["size"], entry["mtime"])
    return {**entry, "log": orjson.loads(record["log"])}


def log_records(root: Path) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = orjson.loads((root / "index-log.json").read_bytes())[
        "logs"
    ]
    return records


def edit_facts(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Change the log facts of every session as `edit` does, sizes and mtimes kept."""
    index = orjson.loads((root / "index-log.json").read_bytes())
    for record in index["logs"].values():
        facts = orjson.loads(record["log"])
        edit(facts)
        record["log"] = orjson.dumps(facts).decode()
    (root / "index-log.json").write_bytes(orjson.dumps(index))


def fork(root: Path, source: str) -> tuple[int, str]:
    out = io.StringIO()
    code = cli.main(
        ["sessions", "fork", source, "--store", str(root), "--child", "kid", "--json"], out=out
    )
    return code, out.getvalue()


def both(tmp_path: Path, write: Writer, source: str = "src", edit: Writer | None = None) -> Path:
    """Write a store, list it (the index is written), copy it with the index dropped; then
    `edit` the indexed copy (a change the index does not know of). Returns the indexed
    copy; `tmp_path / "plain"` is the other."""
    indexed, plain = tmp_path / "indexed", tmp_path / "plain"
    write(indexed)
    listed(indexed)  # a read-only listing writes no index: list with a writer
    store = SessionStore(JsonlBackend(indexed))
    store.list()
    store.close()
    assert (indexed / "index.json").exists()
    if edit is not None:
        edit(indexed)
    shutil.copytree(indexed, plain)
    (plain / "index.json").unlink()
    (plain / "index-log.json").unlink()
    return indexed


def assert_same_fork(
    tmp_path: Path, indexed: Path, loads: list[str], *, reads: bool, source: str = "src"
) -> None:
    """Fork both copies; `reads`: whether the indexed one must read the source's log."""
    plain = tmp_path / "plain"
    loads.clear()
    made = fork(indexed, source)
    assert loads == ([source] if reads else [])
    assert made == fork(plain, source)
    kid = "sessions/kid.jsonl"
    assert (indexed / kid).read_bytes() == (plain / kid).read_bytes()
    assert listed(indexed) == listed(plain)
    # the child's index entry says what a full check of its file says; a fork that read
    # a log the index had no fork facts for may leave the child without them
    parsed, _, tail = parse_log((indexed / kid).read_bytes(), kid)
    for root in (indexed, plain):
        entry = index_entry(root, "kid")
        assert entry["summary"] == parsed.summary.to_index_row()  # type: ignore[union-attr]
        if root is plain or not reads:
            assert entry["log"].get("fork") == index_entry_fork(parsed, tail.point_end)
        else:
            assert entry["log"].get("fork") in (None, index_entry_fork(parsed, tail.point_end))


def index_entry_fork(parsed: Any, end: int | None) -> dict[str, Any] | None:
    if parsed.point is None:
        return None
    return {**parsed.point.to_index(), "end": end}


def sample(*extra: dict[str, Any], header: dict[str, Any] | None = None) -> Writer:
    def write(root: Path) -> None:
        put(root, "src", file_bytes("src", events_of([*SAMPLE, *extra]), **(header or {})))

    return write


# --- the index vouches: the source is not read -------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param((), id="ends-at-a-turn-end"),
        pytest.param(
            (
                *turn("t4", tool=True, open_=True)[:4],
                {
                    "type": "approval/request",
                    "turn": "t4",
                    "approval": "ap",
                    "call": "c",
                    "tool": "r",
                },
            ),
            id="waits-for-an-approval",
        ),
        pytest.param(
            (
                {"type": "model/select", "provider": "other", "model": "m2"},
                {"type": "session/title", "title": "renamed later"},
            ),
            id="model-and-title-after-the-turn",
        ),
    ],
)
def test_a_fork_from_the_index_is_the_fork_from_the_log(
    tmp_path: Path, loads: list[str], extra: tuple[dict[str, Any], ...]
) -> None:
    indexed = both(tmp_path, sample(*extra))
    assert_same_fork(tmp_path, indexed, loads, reads=False)


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(tuple(turn("t4", open_=True)), id="last-turn-open"),
        pytest.param(
            (
                {"type": "model/select", "provider": "other", "model": "m2"},
                {"type": "session/title", "title": "renamed later"},
                *turn("t4", "a later question", open_=True),
            ),
            id="model-and-title-before-an-open-turn",
        ),
    ],
)
def test_a_turn_a_crash_left_open_is_closed_before_either_fork(
    tmp_path: Path, loads: list[str], extra: tuple[dict[str, Any], ...]
) -> None:
    indexed = both(tmp_path, sample(*extra))
    assert_same_fork(tmp_path, indexed, loads, reads=True)
    kid = (indexed / "sessions" / "kid.jsonl").read_bytes()
    assert b'"status":"interrupted"' in kid  # the closed turn is the last completed one


def test_a_torn_last_line_is_covered_by_the_index(tmp_path: Path, loads: list[str]) -> None:
    def write(root: Path) -> None:
        data = file_bytes("src", events_of([*SAMPLE, *waiting("t4")]))
        put(root, "src", data + b'{"seq": 99, "type": "mess')

    indexed = both(tmp_path, write)
    assert_same_fork(tmp_path, indexed, loads, reads=False)
    assert b'"seq": 99' not in (indexed / "sessions" / "kid.jsonl").read_bytes()


@pytest.mark.parametrize("meta_title", ["sample", "from the header"])
def test_the_title_a_header_gives_is_not_taken_for_the_logged_one(
    tmp_path: Path, loads: list[str], meta_title: str
) -> None:
    indexed = both(tmp_path, sample(header={"meta": {"title": meta_title}}))
    assert_same_fork(tmp_path, indexed, loads, reads=False)


def test_a_session_without_logged_title_or_model(tmp_path: Path, loads: list[str]) -> None:
    drafts = [d for d in SAMPLE if d["type"] not in ("session/title", "model/select")]
    indexed = both(tmp_path, lambda root: put(root, "src", file_bytes("src", events_of(drafts))))
    assert_same_fork(tmp_path, indexed, loads, reads=False)


def test_a_fork_of_a_fork(tmp_path: Path, loads: list[str]) -> None:
    def write(root: Path) -> None:
        store = SessionStore(JsonlBackend(root))
        store.create("first", events_of(SAMPLE), cwd="/work/p")
        store.fork("first", 12, "src")  # through turn t1, then more turns in the child
        store.append("src", [*turn("c1", "in the child"), *waiting("c2")])
        store.close()

    indexed = both(tmp_path, write)
    assert_same_fork(tmp_path, indexed, loads, reads=False)
    # and the child of the child forks from the index too
    loads.clear()
    out = io.StringIO()
    assert cli.main(["sessions", "fork", "kid", "--store", str(indexed), "--json"], out=out) == 0
    assert loads == []


def test_the_child_of_a_fork_from_the_log_forks_from_the_index(
    tmp_path: Path, loads: list[str]
) -> None:
    """A fork that read its source leaves the child's fork facts in the index."""
    plain = tmp_path / "plain"
    sample(*waiting("t4"))(plain)
    fork(plain, "src")
    assert loads == ["src"]
    loads.clear()
    out = io.StringIO()
    cli.main(["sessions", "fork", "kid", "--store", str(plain), "--child", "kid2"], out=out)
    assert loads == []
    kid = (plain / "sessions" / "kid.jsonl").read_bytes().splitlines()
    kid2 = (plain / "sessions" / "kid2.jsonl").read_bytes().splitlines()
    seed = orjson.loads(kid[0])["seedLength"]
    assert kid2[1 : seed + 1] == kid[1 : seed + 1]  # the seed, through the turn end


# --- the index does not vouch: the log is read, with the same result ------------------------


def appended(root: Path) -> None:
    """Another writer ends the open turn t4 after the index was written."""
    path = root / "sessions" / "src.jsonl"
    last = orjson.loads(path.read_bytes().splitlines()[-1])["seq"]
    drafts = [
        message("t4", "assistant", "assistant:t4:late", "done now"),
        {"type": "turn/end", "turn": "t4", "status": "completed"},
    ]
    with path.open("ab") as fh:
        for event in events_of(drafts, start=last + 1):
            fh.write(event.encode() + b"\n")


def touched(root: Path) -> None:
    path = root / "sessions" / "src.jsonl"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def old_entries(root: Path) -> None:
    """An index written before entries had fork facts."""
    edit_facts(root, lambda facts: facts.pop("fork"))


def tampered(field: str, value: Callable[[Any], Any]) -> Writer:
    def edit(root: Path) -> None:
        index = orjson.loads((root / "index-log.json").read_bytes())
        record = index["logs"]["src"]
        facts = orjson.loads(record["log"])
        facts["fork"][field] = value(facts["fork"][field])
        record["log"] = orjson.dumps(facts).decode()
        (root / "index-log.json").write_bytes(orjson.dumps(index))

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(appended, id="appended-after-the-index"),
        pytest.param(touched, id="same-size-other-mtime"),
        pytest.param(old_entries, id="entry-without-fork-facts"),
        pytest.param(tampered("end", lambda end: end - 1), id="offset-off-by-one"),
        pytest.param(tampered("end", lambda end: end + 10**6), id="offset-past-the-end"),
        pytest.param(tampered("seq", lambda seq: seq - 1), id="seq-not-a-turn-end"),
        pytest.param(tampered("turn", lambda _: "t1"), id="another-turn"),
        pytest.param(tampered("titled", lambda _: "yes"), id="malformed"),
    ],
)
def test_an_index_that_does_not_vouch_sends_the_fork_to_the_log(
    tmp_path: Path, loads: list[str], edit: Writer
) -> None:
    indexed = both(tmp_path, sample(*waiting("t4")), edit=edit)
    assert_same_fork(tmp_path, indexed, loads, reads=True)


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(lambda data: data.replace(b"\n", b"\n\n", 3), id="blank-lines"),
        pytest.param(lambda data: data.rstrip(b"\n"), id="no-final-newline"),
    ],
)
def test_a_hand_laid_out_log_is_forked_from_its_lines(
    tmp_path: Path, loads: list[str], layout: Callable[[bytes], bytes]
) -> None:
    def write(root: Path) -> None:
        put(root, "src", layout(file_bytes("src", events_of(SAMPLE))))

    indexed = both(tmp_path, write)
    assert index_entry(indexed, "src")["log"]["fork"]["end"] is None
    assert_same_fork(tmp_path, indexed, loads, reads=True)


def test_no_completed_turn_is_refused_the_same_way(tmp_path: Path) -> None:
    drafts = [{"type": "session/title", "title": "t"}, *waiting("t1")]
    indexed = both(tmp_path, lambda root: put(root, "src", file_bytes("src", events_of(drafts))))
    code, out = fork(indexed, "src")
    assert (code, out) == fork(tmp_path / "plain", "src")
    assert orjson.loads(out)["error"]["code"] == "fork-unavailable"
    assert not (indexed / "sessions" / "kid.jsonl").exists()


def test_a_taken_child_id_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    indexed = both(tmp_path, sample())
    put(indexed, "kid", file_bytes("kid", events_of(SAMPLE)))
    before = (indexed / "sessions" / "kid.jsonl").read_bytes()
    code, out = fork(indexed, "src")
    assert code == 1
    assert orjson.loads(out)["error"]["code"] == "duplicate-session-id"
    assert (indexed / "sessions" / "kid.jsonl").read_bytes() == before


def test_subscribers_see_the_seed_of_a_fork_from_the_index(tmp_path: Path) -> None:
    """The change a fork from the index announces holds its seed like any other: read
    from the source when someone reads it."""
    indexed = both(tmp_path, sample(*waiting("t4")))
    store = SessionStore(JsonlBackend(indexed))
    seen: list[Any] = []
    store.subscribe(seen.append)
    made = store.fork_indexed("src", "kid")
    assert made is not None
    (change,) = seen
    assert len(change.seed) == made.seed_length == 22
    assert change.seed[-1] == store.get("src").events[21]
    assert list(change.seed[20:]) == list(store.get("src").events[20:22])
    assert store.get("kid").events[:22] == store.get("src").events[:22]
    store.close()
