"""Issue 18, item 10: a running host follows changes other programs make to its store's
files — a session added, appended to, rewritten or deleted — and tells its clients with
the usual notifications; the index follows too. A real `forkwise host` process, real
files changed by this test process, a real unix socket."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from polling import note_until, wait_until

from forkwise.core.client.client import Client
from forkwise.core.store.watcher import StoreWatcher, diff, scan
from tests.reliability.conftest import FORKWISE, TIMEOUT, child_env

#: a deadline against hangs only (the watcher's own figure is ~1 s; not asserted)
WAIT = 20.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    sock_dir = Path(tempfile.mkdtemp(prefix="fwdf-", dir="/tmp"))
    store = tmp_path / "store"
    proc = subprocess.Popen(
        [FORKWISE, "host", "--store", str(store), "--listen", f"unix:{sock_dir}/h.sock"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        assert proc.stdout.readline().startswith(b"forkwise host listening")
        yield f"unix:{sock_dir}/h.sock", store, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=TIMEOUT)
        for child in sock_dir.iterdir():
            child.unlink()
        sock_dir.rmdir()


def header(sid: str) -> bytes:
    return orjson.dumps({"type": "session", "version": 1, "id": sid, "created":
                         "2026-01-01T00:00:00Z", "cwd": "/tmp", "parentSession": None,
                         "seedLength": 0, "meta": {}}) + b"\n"  # fmt: skip


def title_line(seq: int, title: str) -> bytes:
    return orjson.dumps({"seq": seq, "type": "session/title", "ts": "2026-01-01T00:00:01Z",
                         "title": title}) + b"\n"  # fmt: skip


@pytest.mark.asyncio
async def test_the_host_follows_files_changed_by_other_programs(
    served: tuple[str, Path, subprocess.Popen[bytes]],
) -> None:
    address, store, proc = served
    client = await Client.connect(address, None)
    notes: list[dict[str, Any]] = []
    await client.subscribe(notes.append)
    sessions = store / "sessions"
    try:
        sid = (await client.create_session("mine", cwd="/tmp"))["id"]
        assert (await client.prompt_and_wait(sid, "a turn"))["status"] == "completed"
        last = len(await client.events(sid))
        # another program's file, written after the host's own writes: once the host
        # announces it, the watcher has reported those writes too (in time order; the
        # marker's id sorts after the session's within one report)
        (sessions / "zzzz-marker.jsonl").write_bytes(header("zzzz-marker") + title_line(1, "m"))
        await note_until(notes, lambda n: n.get("kind") == "catalogue/upsert"
                         and n["summary"]["id"] == "zzzz-marker")  # fmt: skip
        own = [n for n in notes if n.get("kind") == "session/events"]
        # another program appends to a session the host holds in memory
        with open(sessions / f"{sid}.jsonl", "ab") as fh:
            fh.write(title_line(last + 1, "renamed elsewhere"))
        note = await note_until(notes, lambda n: n.get("kind") == "session/events"
                           and n["events"][0]["seq"] == last + 1)  # fmt: skip
        assert [e["title"] for e in note["events"]] == ["renamed elsewhere"]
        await note_until(notes, lambda n: n.get("kind") == "catalogue/upsert"
                    and n["summary"]["title"] == "renamed elsewhere")  # fmt: skip
        assert len(await client.events(sid)) == last + 1  # the transcript follows
        # ... adds a session
        (sessions / "outside.jsonl").write_bytes(header("outside") + title_line(1, "new"))
        await note_until(notes, lambda n: n.get("kind") == "catalogue/upsert"
                    and n["summary"]["id"] == "outside")  # fmt: skip
        assert "outside" in [r["id"] for r in await client.list_sessions()]
        # ... and deletes one
        (sessions / "outside.jsonl").unlink()
        await note_until(notes, lambda n: n == {"kind": "catalogue/remove", "sessionId": "outside"})
        assert "outside" not in [r["id"] for r in await client.list_sessions()]
        # the host's own writes were not announced twice
        events_notes = [n for n in notes if n.get("kind") == "session/events"]
        seqs = [e["seq"] for n in events_notes for e in n["events"]]
        assert len(seqs) == len(set(seqs)), seqs
        assert own  # and they were announced once
        # a prompt after the outside append runs on the log as it is on disk
        assert (await client.prompt_and_wait(sid, "again"))["status"] == "completed"
    finally:
        await client.close()
    proc.send_signal(signal.SIGTERM)
    proc.wait(TIMEOUT)
    st = (sessions / f"{sid}.jsonl").stat()
    entry = orjson.loads((store / "index.json").read_bytes())["sessions"][sid]
    assert (entry["size"], entry["mtime"]) == (st.st_size, st.st_mtime_ns)
    assert "outside" not in orjson.loads((store / "index.json").read_bytes())["sessions"]


def test_the_watcher_reports_the_same_changes_with_and_without_inotify(tmp_path: Path) -> None:
    for use_inotify in (True, False):
        folder = tmp_path / f"s{use_inotify}"
        folder.mkdir()
        (folder / "a.jsonl").write_bytes(b"a\n")
        (folder / "b.jsonl").write_bytes(b"b\n")
        seen: list[Any] = []
        watcher = StoreWatcher(folder, seen.append, poll=0.2, use_inotify=use_inotify).start()
        try:
            (folder / "c.jsonl").write_bytes(b"c\n")
            with open(folder / "a.jsonl", "ab") as fh:
                fh.write(b"more\n")
            (folder / "b.jsonl").unlink()
            os.mkfifo(folder / "ignored.txt")
            wait_until(lambda seen=seen: {k for c in seen for k in c.added | c.changed | c.removed}
                       >= {"a", "b", "c"}, WAIT, "a, b and c reported")
        finally:
            watcher.stop()
        added = set().union(*(c.added for c in seen))
        changed = set().union(*(c.changed for c in seen))
        removed = set().union(*(c.removed for c in seen))
        assert (added, changed, removed) == ({"c"}, {"a"}, {"b"}), use_inotify
    assert diff(scan(tmp_path / "nowhere"), {}) .__bool__() is False


def reports_until(seen: list[Any], wanted: set[str]) -> tuple[set[str], set[str], set[str]]:
    """The ids reported added, changed and removed once `wanted` were all reported."""
    wait_until(lambda: {k for c in seen for k in c.added | c.changed | c.removed} >= wanted,
               WAIT, f"{len(wanted)} sessions reported")
    return (set().union(*(c.added for c in seen)), set().union(*(c.changed for c in seen)),
            set().union(*(c.removed for c in seen)))  # fmt: skip


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders the watcher looked at whole, in order (the real scan, recorded)."""
    from forkwise.core.store import watcher

    done: list[Path] = []

    def recorded(folder: Path) -> dict[str, Any]:
        done.append(folder)
        return scan(folder)

    monkeypatch.setattr(watcher, "scan", recorded)
    return done


def test_after_settling_the_kernel_reports_only_the_files_it_names(
    tmp_path: Path, scans: list[Path]
) -> None:
    """A look at 10,000 files costs ~30 ms: a turn's append must not cost one. Once the
    kernel's watch is set up, a report makes the watcher look at the files it names."""
    for n in range(50):
        (tmp_path / f"s{n}.jsonl").write_bytes(b"x\n")
    seen: list[Any] = []
    watcher = StoreWatcher(tmp_path, seen.append, poll=0.2, settle=0.3).start()
    try:
        if watcher.kind != "inotify":
            pytest.skip("no kernel notifications here")
        # the first, and the one when settled
        wait_until(lambda: len(scans) >= 2, WAIT, "the settled scan")
        assert len(scans) == 2
        with open(tmp_path / "s3.jsonl", "ab") as fh:
            fh.write(b"more\n")
        (tmp_path / "new.jsonl").write_bytes(b"n\n")
        (tmp_path / "s7.jsonl").unlink()
        (tmp_path / "notes.txt").write_bytes(b"not a session\n")
        got = reports_until(seen, {"s3", "new", "s7"})
        assert got == ({"new"}, {"s3"}, {"s7"})
        assert len(scans) == 2  # no whole look for them
        # a burst (the kernel's reports may name all of it at once, or part by part)
        for n in range(300):
            (tmp_path / f"burst{n}.jsonl").write_bytes(b"b\n")
        added, _, _ = reports_until(seen, {f"burst{n}" for n in range(300)})
        assert {f"burst{n}" for n in range(300)} <= added
    finally:
        watcher.stop()


def test_a_report_naming_many_files_makes_the_next_look_a_whole_one(tmp_path: Path) -> None:
    watcher = StoreWatcher(tmp_path, lambda _c: None, use_inotify=False)
    watcher._name({(1, str(tmp_path / "a.jsonl")), (1, str(tmp_path / ".b.jsonl")),
                   (1, str(tmp_path / "c.txt"))})  # fmt: skip
    assert watcher._named == {"a"}  # session files only
    watcher._name({(1, str(tmp_path / f"s{n}.jsonl")) for n in range(300)})
    assert watcher._named is None
