"""Fork points: where a log's last completed turn ends and what its summary was there,
as the index keeps them. However they are found — counted by type when a log is checked,
brought forward over appended events, decoded when a fork or a truncation decodes the log
anyway — they are what folding the prefix gives, and what a full check of the file finds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st
from logdata import SAMPLE, events_of, file_bytes, message, turn
from store_harness import StoreHarness
from strategies import examples, logs

from forkwise.core.log.event_log import EventLog
from forkwise.core.log.events import TURN_END
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.checked_log import check_records
from forkwise.core.store.fork_point import fork_point_of
from forkwise.core.store.session import SessionHeader, SessionSummary
from forkwise.core.store.session_store import SessionStore


def sample(root: Path, *extra: dict[str, Any]) -> None:
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    data = file_bytes("src", events_of([*SAMPLE, *extra]))
    (root / "sessions" / "src.jsonl").write_bytes(data)


def saved_fork_facts(root: Path, sid: str) -> Any:
    entry = orjson.loads((root / "index.json").read_bytes())["sessions"][sid]
    record = orjson.loads((root / "index-log.json").read_bytes())["logs"][sid]
    assert (record["size"], record["mtime"]) == (entry["size"], entry["mtime"])
    return orjson.loads(record["log"]).get("fork")  # the facts are kept as text


def checked_fork_facts(root: Path, sid: str) -> Any:
    """The fork facts a full check of the session's file finds."""
    parsed, _, tail = parse_log((root / "sessions" / f"{sid}.jsonl").read_bytes(), sid)
    if parsed.point is None:
        return None
    return {**parsed.point.to_index(), "end": tail.point_end}


def test_facts_saved_after_appends_and_truncation_are_those_of_a_full_check(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    sample(root, *turn("t4", open_=True))
    SessionStore(JsonlBackend(root)).close()
    store = SessionStore(JsonlBackend(root))
    store.list()  # the index now holds the fork facts
    store.close()
    for change in (
        lambda s: s.append("src", [message("t4", "assistant", "assistant:t4:b", "more")]),
        lambda s: s.append("src", [{"type": "turn/end", "turn": "t4", "status": "failed"}]),
        lambda s: s.append("src", [{"type": "model/select", "provider": "p", "model": "m"}]),
        lambda s: s.append("src", turn("t5", "with a title after", open_=False)),
        lambda s: s.truncate("src", 13),
    ):
        store = SessionStore(JsonlBackend(root))
        change(store)
        store.close()
        assert saved_fork_facts(root, "src") == checked_fork_facts(root, "src")


def test_a_point_brought_forward_equals_one_counted_from_the_start() -> None:
    events = events_of([*SAMPLE, *turn("t4"), {"type": "session/title", "title": "x"}, *turn("t5")])
    whole = fork_point_of(events)
    assert whole is not None
    assert whole.seq == len(events)
    for upto in range(1, len(events)):
        earlier = fork_point_of(events[:upto])
        if earlier is not None:
            assert fork_point_of(events, earlier) == whole


@examples(200, 2000)
@given(logs(), st.sampled_from([None, "a", ""]))
def test_a_fork_point_is_what_folding_the_prefix_gives(
    drafts: list[dict[str, Any]], meta_title: str | None
) -> None:
    """Counted by type, brought forward from an earlier point, or from a log that must be
    decoded to learn its types: the point's summary is the prefix's summary."""
    events = events_of(drafts)
    header = SessionHeader("h", "c", "/w", "p", meta={"title": meta_title} if meta_title else {})
    ends = [e.seq for e in events if e.type == TURN_END]
    untyped = EventLog.lazy([e.encode() for e in events])
    assert fork_point_of(untyped) is None
    previous = None
    for b in ends:
        prefix = events[:b]
        point = fork_point_of(prefix)
        assert point is not None
        assert point.seq == b
        assert point.summary(header) == SessionSummary.start(header).fold(prefix)
        assert fork_point_of(prefix, previous) == point
        assert fork_point_of(untyped.view(b), decode=True) == point
        previous = point
    if not ends:
        assert fork_point_of(events) is None


@examples(200, 2000)
@given(logs(), st.sampled_from([None, "a"]))
def test_the_point_a_check_keeps_is_the_one_decoding_the_log_finds(
    drafts: list[dict[str, Any]], meta_title: str | None
) -> None:
    """The loader's check takes the point's values from its own fold as each turn ends
    (`PointTrack`) instead of decoding those events again: at every length of the log,
    checked as records or as a file's lines, it is the point `fork_point_of` decodes."""
    events = events_of(drafts)
    header = SessionHeader("h", "c", "/w", "p", meta={"title": meta_title} if meta_title else {})
    for n in range(len(events) + 1):
        prefix = events[:n]
        expected = fork_point_of(EventLog.lazy([e.encode() for e in prefix]), decode=True)
        assert expected == fork_point_of(prefix)
        assert check_records(header, [e.to_record() for e in prefix]).point == expected
        meta = {"meta": header.meta} if meta_title else {}
        parsed, _, _ = parse_log(file_bytes("h", prefix, **meta), "h")
        assert parsed.point == expected


def test_a_fork_inside_the_log_gives_the_childs_summary(harness: StoreHarness) -> None:
    """One store suite: a fork before the last event, with a title in the child's meta."""
    store = harness.store
    store.create("src", events_of([*SAMPLE, *turn("t4", open_=True)]))
    for b in (12, 18, 22):
        child = store.fork("src", b, meta={"title": "named"})
        expected = SessionSummary.start(child.header).fold(child.events)
        assert store.summary(child.id) == expected
        reopened = harness.reopen()
        assert reopened.summary(child.id) == expected
        store = reopened
