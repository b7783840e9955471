"""`forkwise sessions list` in a process of its own prints the Client's listing byte for
byte (`--json`: the rows newest first in the one order by activity, `listing.activity_key`;
plain: their table), with the store's index and without; a reader's process imports no
ssl (its asyncio has no TLS to offer) yet reaches a host over a unix socket and plain
tcp, and `ssl` stays importable in it; so do a fork's and a delete's; a writer that may
run a model step is left as it was."""

from __future__ import annotations

import asyncio
import io
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from host_process import tcp_host

from forkwise.core.bench.synth import write_store
from forkwise.core.cli import main as cli
from forkwise.core.cli.commands import table
from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.runtime.listing import activity_key, newest_first

TIMEOUT = 60.0
#: more rows than `json_parts` encodes at a time
SESSIONS = cli._PART_ITEMS + 150

HEADER = (
    '{{"type":"session","version":1,"id":"{sid}","created":"2026-02-01T00:00:00Z",'
    '"cwd":"/w","parentSession":{parent},"seedLength":{seed},"meta":{{}}}}\n'
)
TURN = (
    '{{"seq":1,"type":"turn/start","ts":"2026-02-01T00:00:01Z","turn":"turn:1"}}\n'
    '{{"seq":2,"type":"message","ts":"{ts}","turn":"turn:1","id":"user:q:1","role":"user",'
    '"parts":[{{"type":"text","text":"question {sid}"}}]}}\n'
)
#: a turn that waits for an approval: open, whoever lists it
WAITING = (
    '{"seq":3,"type":"message","ts":"2026-02-01T00:00:03Z","turn":"turn:1",'
    '"id":"user:t:2","role":"user","parts":[{"type":"tool_call","id":"call-1",'
    '"name":"read_file","args":{"path":"x"}}]}\n'
    '{"seq":4,"type":"approval/request","ts":"2026-02-01T00:00:04Z","turn":"turn:1",'
    '"approval":"approval-1","call":"call-1","tool":"read_file","args":{"path":"x"}}\n'
)
END = (
    '{"seq":3,"type":"turn/end","ts":"2026-02-01T00:00:05Z","turn":"turn:1","status":"completed"}\n'
)


def _store(root: Path) -> Path:
    """Synthetic sessions (the benchmark's), and beside them: sessions whose logs end at
    one instant (ordered by id), a fork, one waiting for an approval, an unreadable one."""
    write_store(root, SESSIONS, 6)
    sessions = root / "sessions"
    rng = random.Random(5)
    for i in range(40):
        sid = f"tie-{rng.randrange(10**6):06d}-{i}"
        ts = "2026-02-01T00:00:02Z" if i % 2 else "2025-12-31T23:59:59Z"
        log = HEADER.format(sid=sid, parent="null", seed=0) + TURN.format(sid=sid, ts=ts) + END
        (sessions / f"{sid}.jsonl").write_text(log)
    fork = HEADER.format(sid="fork-1", parent='"tie-000000-0"', seed=0)
    (sessions / "fork-1.jsonl").write_text(
        fork + TURN.format(sid="fork-1", ts="2026-03-01T00:00:00Z")
    )
    waiting = HEADER.format(sid="wait-1", parent="null", seed=0)
    (sessions / "wait-1.jsonl").write_text(
        waiting + TURN.format(sid="wait-1", ts="2026-02-01T00:00:02Z") + WAITING
    )
    (sessions / "bad-1.jsonl").write_text("this is no session\n")
    return root


async def _client_rows(
    root: Path, *, writable: bool, usage: bool = False
) -> list[dict[str, Any]]:
    """The Client's listing of `root`, newest first by `activity_key`: a read-only host as
    a one-shot reader opens one (nobody writes: an open turn not waiting was a crash's),
    or a writer's, which leaves the store's index behind."""
    host = Host.open(root, read_only=not writable)
    host.orphaned = not writable
    client = await Client.in_process(host, follow=False)
    try:
        rows = await client.list_sessions(usage=usage)
    finally:
        await client.close()
        await host.close()
    return sorted(rows, key=activity_key, reverse=True)


def _listed(store: Path | str, *options: str) -> bytes:
    """What `sessions list` prints in a fresh process for `store` (a folder or a URL)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "forkwise.core.cli",
            "sessions",
            "list",
            "--store",
            str(store),
            *options,
        ],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_listing_process_prints_the_clients_rows_byte_for_byte(tmp_path: Path) -> None:
    root = _store(tmp_path / "store")
    for indexed in (False, True):
        if indexed:  # a writer lists: the index is written, the next listing reads it
            asyncio.run(_client_rows(root, writable=True))
            assert (root / "index.json").exists()
        else:
            assert not (root / "index.json").exists()
        rows = asyncio.run(_client_rows(root, writable=False))
        assert len(rows) == SESSIONS + 43
        assert {"fork-1", "wait-1", "bad-1"} <= {r["id"] for r in rows}
        assert any(r["error"] for r in rows)
        assert any(r["waiting"] for r in rows)
        # `--json` rows carry each session's own usage, as the client's asked for it do
        with_usage = asyncio.run(_client_rows(root, writable=False, usage=True))
        assert all("usage" in r for r in with_usage if not r["error"])
        want = orjson.dumps(with_usage, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        assert _listed(root, "--json") == want, indexed
        assert _listed(root).decode() == table(rows) + "\n", indexed


def test_newest_first_is_the_order_by_activity_key() -> None:
    """Rows a host made (strings) are sorted by their C-level keys; any other rows (a
    missing or None `updated`, a number) by `activity_key` itself: the same order."""
    rng = random.Random(11)
    stamps = ["2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "", "2025-06-01T10:00:00Z"]
    made = [{"id": f"s-{rng.randrange(50)}-{i}", "updated": rng.choice(stamps)} for i in range(500)]
    odd: list[dict[str, Any]] = [
        {"id": "a"},
        {"id": "b", "updated": None},
        {"id": "c", "updated": 3},
    ]
    for rows in (made, made[:1], [], made[:100] + odd, [*odd, *made[:5]]):
        want = sorted(rows, key=activity_key, reverse=True)
        got = list(rows)
        newest_first(got)
        assert got == want
        assert [r["id"] for r in got] == [r["id"] for r in want]


#: says which of the named modules a command's process imported, and whether ssl can be
#: imported after it
PROBE = """
import sys
from forkwise.core.cli import main as cli
code = cli.main(sys.argv[1:], out=open("/dev/null", "w"))
loaded = [m for m in ("ssl", "_ssl", "asyncio") if m in sys.modules]
import ssl
print(" ".join(loaded), bool(ssl.OPENSSL_VERSION))
sys.exit(code)
"""


def _probe(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_readers_process_imports_no_ssl_and_a_writers_does(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_store(root, 3, 6)
    store = ("--store", str(root), "--json")
    for reader in (("list",), ("show", "bench-000001"), ("context", "bench-000001")):
        assert _probe("sessions", *reader, *store) == "asyncio True", reader
    # commands that write but run no model step: no TLS either, and they did their work
    assert _probe("sessions", "fork", "bench-000001", "--child", "f-1", *store) == "asyncio True"
    assert (root / "sessions" / "f-1.jsonl").is_file()
    assert _probe("sessions", "delete", "f-1", *store) == "asyncio True"
    assert not (root / "sessions" / "f-1.jsonl").exists()
    # a writer that may run a turn is as it was: its host may speak TLS to a model
    assert _probe("sessions", "new", "--id", "n-1", *store) == "ssl _ssl asyncio True"


@pytest.fixture
def served(tmp_path: Path) -> Any:
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    os.chmod(token, 0o600)
    root = tmp_path / "served"
    write_store(root, 5, 6)
    with tcp_host(root, token) as (_, address):
        yield address, token


def test_a_readers_process_reaches_a_host_over_tcp(served: tuple[str, Path]) -> None:
    address, token = served
    connect = ("--connect", address, "--token-file", str(token), "--json")
    assert _probe("sessions", "list", *connect) == "asyncio True"
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", "sessions", "list", *connect],
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    rows = orjson.loads(done.stdout)
    assert sorted(r["id"] for r in rows) == [f"bench-{i:06d}" for i in range(5)]
    assert rows == sorted(rows, key=activity_key, reverse=True)
    shown = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", "sessions", "show", rows[0]["id"], *connect],
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert orjson.loads(shown.stdout)["header"]["id"] == rows[0]["id"]


def test_a_readers_process_lists_a_database(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store in PostgreSQL (its TLS is libpq's): a reader's process lists it as a
    command run where asyncio has its ssl."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # this machine's files
    for sid in ("pg-1", "pg-2"):
        assert cli.main(["sessions", "new", "--store", pg_url, "--id", sid], out=io.StringIO()) == 0
    here = io.StringIO()
    assert cli.main(["sessions", "list", "--store", pg_url, "--json"], out=here) == 0
    listed = _listed(pg_url, "--json")
    assert sorted(r["id"] for r in orjson.loads(listed)) == ["pg-1", "pg-2"]
    assert listed.decode() == here.getvalue()


def test_a_file_whose_name_is_not_utf8_is_not_a_session(tmp_path: Path) -> None:
    """A log copied in under a name that is not UTF-8 made every listing end in a
    traceback (its id cannot be encoded); the store's sessions list as before."""
    root = tmp_path / "store"
    write_store(root, 2, 6)
    sessions = os.fsencode(root / "sessions")
    data = (root / "sessions" / "bench-000000.jsonl").read_bytes()
    with open(sessions + b"/\xff\xfe.jsonl", "wb") as fh:
        fh.write(data)
    for name in ("index.json", "index-log.json", "index-head.json"):
        (root / name).unlink(missing_ok=True)
    for _ in range(2):  # building the index, then from it
        rows = orjson.loads(_listed(root, "--json"))
        assert sorted(r["id"] for r in rows) == ["bench-000000", "bench-000001"]
    assert os.path.exists(sessions + b"/\xff\xfe.jsonl")  # left alone

