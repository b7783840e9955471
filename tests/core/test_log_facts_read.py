"""Reading one session's log facts (`index-log.json`) without decoding every session's: a
process's first load of a session decoded the facts of all of them (10,000 sessions: 6 MB),
with the GIL held, while the app's first page-downs waited. The record read alone must be
the one the whole file gives, and a file not of the form this version writes is read as
before (whole, or not at all)."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from logdata import SAMPLE

from forkwise.core.store import checked_log
from forkwise.core.store.backends.catalogue import RECORDS_ALONE
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

IDS = ("fork", "a", "size", "logs", "b-1", "version")  # keys the file itself holds, too


def opened(root: Path) -> SessionStore:
    return SessionStore(JsonlBackend(root))


def written(root: Path) -> dict[str, list[bytes]]:
    """Sessions of `IDS` with turns, indexed with their facts; each one's lines."""
    store = opened(root)
    lines = {}
    for sid in IDS:
        store.create(sid, meta={"title": sid})
        store.append(sid, SAMPLE)
        lines[sid] = [e.encode() for e in store.get(sid).events]
    store.close()
    return lines


def logs_file(root: Path) -> Path:
    return root / "index-log.json"


def as_written(body: bytes) -> bytes:
    """A file of facts with the logs mapping `body`, as this version writes one."""
    return b'{"version":1,"logs":%s,"crc32":%d}' % (body, zlib.crc32(body))


def checks_and_decodes(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """The lines the loader checks one by one, and the size of each JSON text decoded."""
    checks: list[int] = []
    decoded: list[int] = []
    check, loads = checked_log.check_record, orjson.loads

    def counting(record: dict[str, object], raw: bytes | None = None) -> tuple[int, str]:
        checks.append(1)
        return check(record, raw)

    def measuring(data: Any) -> Any:
        decoded.append(len(data))
        return loads(data)

    monkeypatch.setattr(checked_log, "check_record", counting)
    monkeypatch.setattr(orjson, "loads", measuring)
    return checks, decoded


def test_a_load_decodes_that_sessions_facts_only(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = written(jsonl_root)
    raw = logs_file(jsonl_root).read_bytes()
    assert raw == as_written(orjson.dumps(orjson.loads(raw)["logs"]))
    size = len(raw)
    checks, decoded = checks_and_decodes(monkeypatch)
    store = opened(jsonl_root)
    for sid in IDS:  # each first of its id in the file's text, some as keys of the file's own
        assert [e.encode() for e in store.get(sid).events] == lines[sid]
    assert checks == []  # every session's facts were taken
    assert size not in decoded  # the whole file of facts never was
    store.close()


def test_facts_an_older_index_kept_as_objects_are_read_alone_as_well(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Facts moved from an older index (objects, with a "fork" object inside) stand
    before the records of sessions named like their keys."""
    lines = written(jsonl_root)
    data = orjson.loads(logs_file(jsonl_root).read_bytes())
    records = data["logs"]
    for record in records.values():
        record["log"] = orjson.loads(record["log"])
        assert "fork" in record["log"]
    body = orjson.dumps({sid: records[sid] for sid in ("a", *[s for s in IDS if s != "a"])})
    logs_file(jsonl_root).write_bytes(as_written(body))
    checks, decoded = checks_and_decodes(monkeypatch)
    store = opened(jsonl_root)
    for sid in IDS:
        assert [e.encode() for e in store.get(sid).events] == lines[sid]
    assert checks == []
    assert logs_file(jsonl_root).stat().st_size not in decoded
    store.close()


@pytest.mark.parametrize("form", ["no digest", "indented", "digest of other bytes"])
def test_a_file_of_another_form_is_decoded_whole_as_before(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """Written before (no digest), some other way, or changed since: still JSON of this
    version, so still used, as a whole."""
    lines = written(jsonl_root)
    raw = logs_file(jsonl_root).read_bytes()
    data = orjson.loads(raw)
    if form == "no digest":
        raw = orjson.dumps({"version": 1, "logs": data["logs"]})
    elif form == "indented":
        raw = orjson.dumps(data, option=orjson.OPT_INDENT_2)
    else:
        raw = raw.replace(b'"crc32":', b'"crc32":1', 1)
    logs_file(jsonl_root).write_bytes(raw)
    checks, decoded = checks_and_decodes(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("fork").events] == lines["fork"]
    assert checks == []
    assert len(raw) in decoded
    store.close()


def damaged(raw: bytes) -> list[bytes]:
    """Files of facts no whole decode accepts (or of another version)."""
    at = raw.index(b'"a":{') + len(b'"a":{')
    return [
        raw[:-1],  # cut short
        raw[: len(raw) // 2] + b"}}",  # cut in the middle of a record, closed
        raw[:at] + b'"size":1,,' + raw[at:],  # the record of the session read
        raw.replace(b'{"version":1,', b'{"version":99,', 1),
        raw.replace(b'"mtime"', b'"mtime"\x00', 1),  # another record, before it
        raw.replace(b'"b-1":{', b'"b-1":[', 1),  # another record, after it
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_file_a_whole_decode_refuses_gives_no_facts(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch, case: int
) -> None:
    """As before: every line of the log is checked (and nothing is taken from the file)."""
    lines = written(jsonl_root)
    logs_file(jsonl_root).write_bytes(damaged(logs_file(jsonl_root).read_bytes())[case])
    checks, _ = checks_and_decodes(monkeypatch)
    store = opened(jsonl_root)
    assert [e.encode() for e in store.get("a").events] == lines["a"]
    assert len(checks) == len(lines["a"])
    store.close()


def test_facts_saved_after_a_read_alone_keep_every_record(jsonl_root: Path) -> None:
    """A save after loads that read records alone writes the whole file again, with the
    records of the sessions not loaded as they were, and a digest that matches."""
    written(jsonl_root)
    before = orjson.loads(logs_file(jsonl_root).read_bytes())
    store = opened(jsonl_root)
    store.get("a")
    store.append("a", SAMPLE[:1])
    store.create("c")
    store.close()
    after = orjson.loads(logs_file(jsonl_root).read_bytes())
    assert after["crc32"] != before["crc32"]
    assert {sid: r for sid, r in after["logs"].items() if sid not in ("a", "c")} == {
        sid: r for sid, r in before["logs"].items() if sid != "a"
    }
    assert after["logs"]["a"]["size"] == (jsonl_root / "sessions" / "a.jsonl").stat().st_size


def test_a_process_that_reads_many_sessions_decodes_the_file_once(
    jsonl_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each record read alone searches the file: past a few, the file is decoded once
    and every other session's facts come from that."""
    store = opened(jsonl_root)
    ids = [f"s{n:02}" for n in range(RECORDS_ALONE + 4)]
    lines = {}
    for sid in ids:
        store.create(sid)
        store.append(sid, SAMPLE)
        lines[sid] = [e.encode() for e in store.get(sid).events]
    store.close()
    size = logs_file(jsonl_root).stat().st_size
    checks, decoded = checks_and_decodes(monkeypatch)
    store = opened(jsonl_root)
    for n, sid in enumerate(ids):
        assert [e.encode() for e in store.get(sid).events] == lines[sid]
        assert decoded.count(size) == (0 if n < RECORDS_ALONE else 1)
    assert checks == []
    store.close()
