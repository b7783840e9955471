"""`forkwise sessions import` on real tool homes: every format through the one import verb,
with lineage, idempotent and incremental re-import, and failures reported per file."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from codex_fixtures import basic, home_with_fork, thread_id
from polling import until

from forkwise.core.cli import main as cli


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def snapshot(store: Path) -> dict[str, tuple[int, bytes]]:
    return {
        p.name: (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted((store / "sessions").glob("*.jsonl"))
    }


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    return home_with_fork(tmp_path / "codex")


def test_a_codex_home_imports_with_its_fork_and_imports_again_unchanged(
    tmp_path: Path, codex_home: Path
) -> None:
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "codex", str(codex_home),
                            "--store", str(store))
    assert code == 0, report
    parent, child = f"codex-{thread_id(1)}", f"codex-{thread_id(2)}"
    assert sorted(report["imported"]) == sorted([parent, child])
    assert report["failed"] == []
    code, rows = run_json("sessions", "list", "--store", str(store))
    by_id = {r["id"]: r for r in rows}
    assert by_id[parent]["title"] == "Fix the parser bug"
    assert by_id[child]["parentSession"] == parent
    assert by_id[child]["relation"] == "fork"
    assert by_id[child]["seedLength"] > 0
    header = orjson.loads((store / "sessions" / f"{parent}.jsonl").read_bytes().split(b"\n")[0])
    assert header["meta"]["source"]["tool"] == "codex"
    assert header["meta"]["source"]["id"] == thread_id(1)
    # the shared prefix is stored once: the child's file names the parent's lines as its
    # seed and holds its own, and reads as the parent's lines and then its own
    p_lines = (store / "sessions" / f"{parent}.jsonl").read_bytes().splitlines()
    c_lines = (store / "sessions" / f"{child}.jsonl").read_bytes().splitlines()
    seed = by_id[child]["seedLength"]
    c_header = orjson.loads(c_lines[0])
    assert (c_header["seedIn"]["session"], c_header["seedIn"]["events"]) == (parent, seed)
    code, shown = run_json("sessions", "show", child, "--store", str(store))
    assert code == 0
    assert len(shown["events"]) == seed + len(c_lines) - 1
    assert [orjson.dumps(e) for e in shown["events"][:seed]] == p_lines[1 : seed + 1]
    before = snapshot(store)
    code, again = run_json("sessions", "import", "--from", "codex", str(codex_home),
                           "--store", str(store))
    assert code == 0
    assert sorted(again["unchanged"]) == sorted([parent, child])
    assert again["imported"] == again["updated"] == []
    assert snapshot(store) == before  # no file touched


def test_a_grown_source_appends_only_its_new_events(tmp_path: Path) -> None:
    home, store = tmp_path / "codex", tmp_path / "store"
    rollout = basic(3)
    path = rollout.write(home)
    code, _ = run_json("sessions", "import", str(path), "--store", str(store))
    assert code == 0  # recognised as Codex without --from
    sid = f"codex-{thread_id(3)}"
    before = (store / "sessions" / f"{sid}.jsonl").read_bytes()
    rollout.prompt("a third question")
    rollout.answer("A third answer.", item_id="msg_third")
    rollout.write(home)
    os.utime(path, None)
    code, report = run_json("sessions", "import", str(path), "--store", str(store))
    assert (code, report["updated"]) == (0, [sid])
    after = (store / "sessions" / f"{sid}.jsonl").read_bytes()
    assert after.startswith(before)  # the header and the old lines are untouched
    assert b"A third answer." in after[len(before):]


def test_one_bad_file_fails_with_its_line_and_the_others_import(tmp_path: Path) -> None:
    home, store = tmp_path / "codex", tmp_path / "store"
    good = basic(4).write(home)
    bad_rollout = basic(5)
    # garbage where the thread's session_meta should be: no identity to import it under
    bad = bad_rollout.write(home, data=b"{not json\n" + bad_rollout.raw())
    code, report = run_json("sessions", "import", "--from", "codex", str(good), str(bad),
                            "--store", str(store))
    assert code == 1
    assert report["imported"] == [f"codex-{thread_id(4)}"]
    (failed,) = report["failed"]
    assert failed["path"] == str(bad)
    assert failed["line"] == 1
    assert not (store / "sessions" / f"codex-{thread_id(5)}.jsonl").exists()


def test_a_fork_continued_here_exports_back_to_codex(
    tmp_path: Path, codex_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Export and read back through the CLI: import, fork, a turn with Forkwise's offline model,
    export to Codex's own folder; the file starts with a new session_meta, repeats the
    source's lines unchanged, and reads back with the new turn."""
    from forkwise.core.formats.codex import READER

    store = tmp_path / "store"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    run_json("sessions", "import", "--from", "codex", str(codex_home), "--store", str(store))
    parent = f"codex-{thread_id(1)}"
    code, made = run_json("sessions", "fork", parent, "--child", "mine", "--store", str(store))
    assert code == 0, made
    code, turn = run_json("sessions", "prompt", "mine", "go on from here", "--store", str(store))
    assert (code, turn["status"]) == (0, "completed")
    code, sent = run_json("sessions", "export", "mine", "--to", "codex", "--store", str(store))
    assert code == 0, sent
    path = Path(sent["path"])
    assert path.is_relative_to(codex_home / "sessions")
    assert sent["resume"] == f"codex resume {sent['id']}"
    written = path.read_bytes().splitlines()
    first = orjson.loads(written[0])
    assert first["type"] == "session_meta"
    assert first["payload"]["id"] == sent["id"]
    assert first["payload"]["forked_from_id"] == thread_id(1)
    source = basic(1).raw().splitlines()
    assert set(source[1:]) <= set(written)  # the parent's lines, byte for byte
    (back, *_rest) = READER.read(path)
    texts = [p["text"] for e in back.events if e["type"] == "message" for p in e["parts"]
             if p["type"] == "text"]
    assert "go on from here" in texts
    # where it was sent is in the fork's own log
    code, shown = run_json("sessions", "show", "mine", "--store", str(store))
    exports = [e for e in shown["events"] if e["type"] == "plugin/forkwise/export"]
    assert exports[-1]["id"] == sent["id"]


@pytest.mark.asyncio
async def test_a_watched_codex_folder_brings_new_and_grown_sessions_in(tmp_path: Path) -> None:
    """Keeping up with an agent: the host watches its folder; a session it writes appears,
    a session that grows grows — through the one import verb."""

    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    home = tmp_path / "codex"
    home.mkdir()
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    host.sources.env["CODEX_HOME"] = str(home)
    host.sources.interval = 0.05
    client = await Client.in_process(host)
    try:
        seen: list[dict[str, Any]] = []
        await client.subscribe(seen.append)
        torn = basic(6)
        lines = torn.raw().split(b"\n")
        torn_path = torn.write(home, data=b"\n".join([*lines[:3], b"{torn", *lines[3:]]))
        listed = await client.watch_sources(["codex"])
        assert listed["watching"] == ["codex"]
        assert listed["failed"] == []  # its first look found nothing it could not read
        # what it read only in part: imported, the line named
        assert [(w["path"], w["line"]) for w in listed["warnings"]] == [(str(torn_path), 4)]
        # its row comes as a notification
        await until(lambda: f"codex-{thread_id(6)}" in client.catalogue, 10.0, "its row")
        rollout = basic(7)
        rollout.write(home)
        sid = f"codex-{thread_id(7)}"
        await until(lambda: sid in client.catalogue, 10.0, "its row")
        before = client.catalogue[sid]["events"]
        rollout.prompt("one more")
        rollout.answer("More.", item_id="msg_more2")
        path = rollout.write(home)
        os.utime(path, None)
        await until(lambda: client.catalogue[sid]["events"] > before, 10.0, "the new events")
        grown = [n for n in seen if n["kind"] == "session/events" and n["sessionId"] == sid]
        assert grown  # the open transcript gets the new events as they are appended
        await client.watch_sources([])
        assert host.sources.tools == []
    finally:
        await client.close()
        await host.close()


def test_a_fifo_among_an_agents_session_files_fails_alone_and_never_hangs(
    tmp_path: Path,
) -> None:
    """A FIFO named like a session file is never opened for reading (that would wait for a
    writer for ever): a folder import reports it failed, never passes over it in silence,
    and named as a file it fails at once as not a regular file while the real files
    import."""
    home, store = tmp_path / "codex", tmp_path / "store"
    good = basic(8).write(home)
    fifo = good.with_name("rollout-2025-09-01T10-00-00-" + thread_id(9) + ".jsonl")
    os.mkfifo(fifo)
    code, report = run_json("sessions", "import", "--from", "codex", str(home),
                            "--store", str(store))
    assert (code, report["imported"]) == (1, [f"codex-{thread_id(8)}"])
    assert [(f["path"], f["error"]["code"]) for f in report["failed"]] == [
        (str(fifo), "not-a-regular-file")
    ]
    for tool, folder in (("claude", "projects/-work"), ("pi", "sessions/--work--")):
        other = tmp_path / tool / folder
        other.mkdir(parents=True)
        os.mkfifo(other / "pipe.jsonl")
        code, report = run_json("sessions", "import", "--from", tool, str(tmp_path / tool),
                                "--store", str(store))
        assert code == 1
        assert [f["path"] for f in report["failed"]] == [str(other / "pipe.jsonl")]
    code, report = run_json("sessions", "import", "--from", "codex", str(good), str(fifo),
                            "--store", str(store))
    assert code == 1
    assert report["unchanged"] == [f"codex-{thread_id(8)}"]
    (failed,) = report["failed"]
    assert failed["path"] == str(fifo)
    assert failed["error"]["code"] == "not-a-regular-file"
