"""What only a server has: several hosts (processes with connections of their own) on one
PostgreSQL store, the password outside the URL, and changes announced to the others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from store_harness import database_rows

from forkwise.core.errors import ForkwiseError
from forkwise.core.store.backends.postgres import PostgresBackend
from forkwise.core.store.session_store import SessionStore

WRITER = Path(__file__).with_name("pg_writer.py")


def writers(url: str, n: int, *groups: list[str]) -> list[list[tuple[str, str]]]:
    """Run one writer process per group of sessions, all at once; what each printed."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), url, str(n), *sids],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sids in groups
    ]
    out: list[list[tuple[str, str]]] = []
    for proc in procs:  # each holds its sessions until all are done
        assert proc.stdout is not None
        lines = []
        while (line := proc.stdout.readline()) != "done\n":
            assert line, proc.communicate(timeout=10)[1]
            lines.append(tuple(line.split()))
        out.append(lines)  # type: ignore[arg-type]
    for proc in procs:
        _, stderr = proc.communicate("\n", timeout=60)
        assert proc.returncode == 0, stderr
    return out


def ticks(url: str, sid: str) -> list[tuple[int, int]]:
    """(seq, pid of the writer) of each event of a session, from the rows themselves."""
    import orjson

    _, lines, *_ = database_rows(url)[sid]
    out = []
    for line in lines:
        record = orjson.loads(line)
        out.append((record["seq"], record["pid"]))
    return out


def test_two_hosts_on_one_database_lose_and_duplicate_nothing(pg_url: str) -> None:
    setup = SessionStore(PostgresBackend(pg_url))
    for sid in ("a", "b", "both"):
        setup.create(sid)
    setup.close()  # its writer locks go with its connection
    out_a, out_b = writers(pg_url, 300, ["a", "both"], ["b", "both"])
    acked: dict[str, list[int]] = {"a": [], "b": [], "both": []}
    refused: list[str] = []
    for printed in (out_a, out_b):
        for sid, what in printed:
            if what.isdigit():
                acked[sid].append(int(what))
            else:
                refused.append(f"{sid} {what}")
    # exactly one of the two became the writer of the shared session; the other was told
    assert refused == ["both session-busy"]
    for sid, seqs in acked.items():
        rows = ticks(pg_url, sid)
        assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))  # no gap, no twin
        assert sorted(seqs) == [seq for seq, _ in rows], sid  # every acknowledged one, only
        assert len({pid for _, pid in rows}) == 1, sid  # one writer per session
    assert len(acked["a"]) + len(acked["b"]) + len(acked["both"]) == 600 - 1
    # the next host after them continues the log where they left it
    [(sid, seq)] = writers(pg_url, 1, ["both"])[0]
    assert (sid, int(seq)) == ("both", len(acked["both"]) + 1)
    reader = SessionStore(PostgresBackend(pg_url))
    summary = {s.id: s for s in reader.list()}["both"]
    reader.close()
    assert summary.events == len(acked["both"]) + 1


def test_a_second_writer_in_process_gets_session_busy_and_changes_nothing(pg_url: str) -> None:
    first, second = SessionStore(PostgresBackend(pg_url)), SessionStore(PostgresBackend(pg_url))
    try:
        first.create("s")
        first.append("s", [{"type": "plugin/x/y", "n": 1}])
        before = database_rows(pg_url)
        for attempt in (
            lambda: second.append("s", [{"type": "plugin/x/y", "n": 2}]),
            lambda: second.truncate("s", 0),
            lambda: second.delete("s"),
        ):
            with pytest.raises(ForkwiseError) as exc:
                attempt()
            assert exc.value.code == "session-busy"
        assert database_rows(pg_url) == before
        # reading and forking another host's session is allowed
        assert second.fork("s", 1, "kid").events[0].encode() == first.get("s").events[0].encode()
    finally:
        first.close()
        second.close()
    # the writer closed: the session is free for the next one
    third = SessionStore(PostgresBackend(pg_url))
    assert third.append("s", [{"type": "plugin/x/y", "n": 3}])[0].seq == 2
    third.close()


def test_a_stale_copy_is_refused_and_read_again(pg_url: str) -> None:
    """A host that read a session before another host grew it does not write over it."""
    a = SessionStore(PostgresBackend(pg_url))
    a.create("s")
    a.close()
    reader = SessionStore(PostgresBackend(pg_url))
    assert reader.last_seq("s") == 0
    other = SessionStore(PostgresBackend(pg_url))
    other.append("s", [{"type": "plugin/x/y", "n": 1}])
    other.close()
    with pytest.raises(ForkwiseError) as exc:
        reader.append("s", [{"type": "plugin/x/y", "n": 2}])
    assert exc.value.code == "stale-session"
    # the store forgot its copy: the next append reads the log again and goes on
    assert reader.append("s", [{"type": "plugin/x/y", "n": 2}])[0].seq == 2
    reader.close()


def test_the_password_comes_from_the_environment_not_the_url(
    pg_server: object, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = pg_url.replace(f":{pg_server.password}@", "@")  # type: ignore[attr-defined]
    assert pg_server.password not in url  # type: ignore[attr-defined]
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    with pytest.raises(ForkwiseError) as exc:
        PostgresBackend(url)
    assert exc.value.code == "storage-error"
    monkeypatch.setenv("PGPASSWORD", pg_server.password)  # type: ignore[attr-defined]
    store = SessionStore(PostgresBackend(url))
    store.create("s")
    assert store.ids() == ["s"]
    store.close()


def test_unknown_event_lines_round_trip_byte_for_byte(pg_url: str) -> None:
    line = b'{"seq":1,"type":"plugin/x/odd","ts":"2026-01-01T00:00:00Z","z":1,"a":[1.50,"\\u00e9"]}'
    import orjson

    from forkwise.core.log.events import Event
    from forkwise.core.store.session import SessionHeader

    event = Event.from_record(orjson.loads(line), line)
    store = SessionStore(PostgresBackend(pg_url))
    store.import_session(SessionHeader("odd", "2026-01-01T00:00:00Z", "/x"), [event])
    store.fork("odd", 1, "kid")
    store.close()
    rows = database_rows(pg_url)
    assert rows["odd"][1] == (line,)
    assert rows["kid"][1][0] == line
    with psycopg.connect(pg_url) as conn:
        kinds = conn.execute("SELECT type FROM forkwise_events ORDER BY session, seq").fetchall()
    assert kinds == [(b"plugin/x/odd",), (b"history/fork",), (b"plugin/x/odd",)]


def test_a_fork_of_a_session_not_loaded_copies_rows_it_never_read(pg_url: str) -> None:
    """After a store closed, what it checked is kept: another store forks the session at
    its last completed turn from those facts alone, and the child is the one a fork of the
    read log makes."""
    from logdata import SAMPLE, turn

    first = SessionStore(PostgresBackend(pg_url))
    first.create("src", cwd="/w", meta={"title": "source"})
    first.append("src", SAMPLE)
    expected = first.fork("src", None, "from-log")
    first.close()
    second = SessionStore(PostgresBackend(pg_url))
    try:
        made = second.fork_indexed("src", "from-index")
        assert made is not None  # the kept facts vouched for it
        assert made.events == expected.last_seq
        child = second.get("from-index")
        got, want = child.events, expected.events
        assert [e.encode() for e in got[:-1]] == [e.encode() for e in want[:-1]]
        assert got[-1].fields == want[-1].fields  # the same history/fork, digest included
        assert made == {s.id: s for s in second.list()}["from-index"]
    finally:
        second.close()
    # a turn begun since: the facts no longer hold, and the store reads the log instead
    third = SessionStore(PostgresBackend(pg_url))
    fourth = SessionStore(PostgresBackend(pg_url))
    try:
        third.append("src", turn("t9", open_=True)[:1])
        assert fourth.fork_indexed("src", "again") is None
    finally:
        third.close()
        fourth.close()
