"""A hostile agent folder: FIFOs, devices, links out of the folder, decompression bombs
and colliding ids where Claude Code, Codex and pi keep their sessions. Nothing there hangs
an import or an export, fills memory, or is read through a link out of its folder; each
such file is reported by code and the good sessions beside it are imported.

Real `forkwise` processes with a deadline each: a hang fails the test, not the suite.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_projects
from tests.formats.codex_fixtures import basic, thread_id
from tests.reliability.conftest import FORKWISE, child_env

#: seconds a command may take here; a hang shows as a timeout well before the suite's own
QUICK = 30.0


def forkwise(home: Path, *argv: str, **env: str) -> tuple[int, Any]:
    """`forkwise ARGV --json` with HOME (and the tools' folders) under `home`."""
    folders = {"CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / "codex"),
               "PI_CODING_AGENT_DIR": str(home / ".pi")}  # fmt: skip
    done = subprocess.run(
        [FORKWISE, *argv, "--json"], capture_output=True, text=True, timeout=QUICK,
        env=child_env(HOME=str(home), XDG_DATA_HOME=str(home / "data"), **{**folders, **env}),
        check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, orjson.loads(done.stdout)


def failed_codes(report: dict[str, Any]) -> dict[str, str]:
    return {Path(f["path"]).name: f["error"]["code"] for f in report["failed"]}


def test_a_fifo_session_index_does_not_hang_a_codex_import(tmp_path: Path) -> None:
    """`$CODEX_HOME/session_index.jsonl` as a FIFO: the import read it with a plain open,
    which waits for a writer forever (the CLI hung)."""
    home = tmp_path / "codex"
    basic(1).write(home)
    os.mkfifo(home / "session_index.jsonl")
    store = str(tmp_path / "store")
    code, report = forkwise(
        tmp_path, "sessions", "import", "--from", "codex", "--store", store, CODEX_HOME=str(home)
    )
    assert code == 0, report
    assert len(report["imported"]) == 1, report


def test_fifos_devices_and_links_out_are_reported_not_read(tmp_path: Path) -> None:
    projects = tmp_path / ".claude"
    good, elsewhere = claude_projects(projects, sessions=2)
    folder = good.parent
    outside = tmp_path / "outside.jsonl"
    elsewhere.rename(outside)  # a session file of someone else's, outside the folder
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    (folder / "out.jsonl").symlink_to(outside)
    (folder / "null.jsonl").symlink_to("/dev/null")
    store = str(tmp_path / "store")
    code, report = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert code == 1, report
    assert failed_codes(report) == {
        "pipe.jsonl": "not-a-regular-file",
        "zero.jsonl": "link-out-of-folder",
        "out.jsonl": "link-out-of-folder",
        "null.jsonl": "link-out-of-folder",
    }
    assert report["imported"] == [f"claude-{good.stem}"], report
    # asked for by name, a FIFO or device is refused the same way
    for target in (folder / "pipe.jsonl", Path("/dev/zero")):
        code, report = forkwise(
            tmp_path, "sessions", "import", str(target), "--from", "claude", "--store", store
        )
        assert code == 1, report
        assert [f["error"]["code"] for f in report["failed"]] == ["not-a-regular-file"]


def test_a_link_inside_its_folder_is_still_read(tmp_path: Path) -> None:
    projects = tmp_path / ".claude"
    (good,) = claude_projects(projects, sessions=1)
    kept = good.with_name("kept")
    good.rename(kept)
    good.symlink_to(kept.name)
    store = str(tmp_path / "store")
    code, report = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert code == 0, report
    assert report["imported"] == [f"claude-{good.stem}"]


@pytest.fixture
def exported_once(tmp_path: Path) -> tuple[str, Path]:
    """A store holding one session with a completed turn, and a Codex home."""
    store = str(tmp_path / "store")
    code, made = forkwise(
        tmp_path, "sessions", "new", "--store", store, "--id", "s", "--title", "named"
    )
    assert code == 0, made
    code, done = forkwise(tmp_path, "sessions", "prompt", "s", "hello", "--store", store)
    assert code == 0, done
    home = tmp_path / "codex"
    home.mkdir()
    return store, home


def test_an_export_neither_hangs_on_nor_appends_through_the_index(
    tmp_path: Path, exported_once: tuple[str, Path]
) -> None:
    store, home = exported_once
    victim = tmp_path / "victim.txt"
    victim.write_text("not Codex's\n")
    (home / "session_index.jsonl").symlink_to(victim)
    code, made = forkwise(
        tmp_path, "sessions", "export", "s", "--to", "codex", "--store", store,
        CODEX_HOME=str(home),
    )  # fmt: skip
    assert code == 0, made
    assert Path(made["path"]).is_file()
    assert victim.read_text() == "not Codex's\n"
    (home / "session_index.jsonl").unlink()
    os.mkfifo(home / "session_index.jsonl")
    code, made = forkwise(
        tmp_path, "sessions", "export", "s", "--to", "codex", "--store", store,
        CODEX_HOME=str(home),
    )  # fmt: skip
    assert code == 0, made


def test_an_export_reads_its_source_safely(tmp_path: Path) -> None:
    """An imported session's source replaced by a FIFO: the export read it with a plain
    read_bytes() and hung."""
    projects = tmp_path / ".claude"
    (good,) = claude_projects(projects, sessions=1)
    store = str(tmp_path / "store")
    code, report = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert code == 0, report
    (sid,) = report["imported"]
    good.unlink()
    os.mkfifo(good)
    code, made = forkwise(tmp_path, "sessions", "export", sid, "--to", "claude", "--store", store)
    assert code == 1, made
    assert made["error"]["code"] == "not-a-regular-file", made


def write_bomb(path: Path, gib: float = 1.5) -> int:
    """A zstd rollout of zeros that inflates to `gib` GiB (made as a stream: ~50 KB on
    disk, ~0.5 s); its size."""
    import zstandard

    chunk = bytes(16 << 20)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer = zstandard.ZstdCompressor(level=1).stream_writer(fh)
        for _ in range(int(gib * 1024) // 16):
            writer.write(chunk)
        writer.flush(zstandard.FLUSH_FRAME)
    return path.stat().st_size


#: the address space the importing process may have: less than the bomb inflates to
MEMORY_CAP = 1200 << 20


def capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def test_a_decompression_bomb_fails_alone_under_a_memory_cap(tmp_path: Path) -> None:
    """A 1.5 GiB bomb of ~50 KB beside a good rollout, imported by a process that may
    not have 1.2 GiB: the bomb inflated whole and the import died with `internal error`,
    taking the good session with it."""
    home = tmp_path / "codex"
    good = basic(1).write(home)
    bomb = good.parent / f"rollout-2025-09-01T10-00-00-{thread_id(2)}.jsonl.zst"
    assert write_bomb(bomb) < 100_000
    store = str(tmp_path / "store")
    argv = [FORKWISE, "sessions", "import", str(home), "--from", "codex", "--store", store,
            "--json"]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=QUICK, preexec_fn=capped, check=False,
        env=child_env(HOME=str(tmp_path)),
    )  # fmt: skip
    assert done.stdout, done.stderr
    report = orjson.loads(done.stdout)
    assert done.returncode == 1, report
    assert report["imported"] == [f"codex-{thread_id(1)}"], report
    assert failed_codes(report) == {bomb.name: "source-too-large"}


@pytest.mark.asyncio
async def test_the_watcher_does_not_read_a_failed_bomb_again(tmp_path: Path) -> None:
    """Its failure is remembered by the file's size and time: an unchanged bomb is not
    inflated again on every pass."""
    from forkwise.core.host.host import Host

    home = tmp_path / "codex"
    bomb = home / "sessions" / f"rollout-2025-09-01T10-00-00-{thread_id(3)}.jsonl.zst"
    write_bomb(bomb, 0.25)
    host = Host.open(tmp_path / "store")
    try:
        listed = await asyncio.wait_for(
            host.watch_sources(["codex"], {"codex": [str(home)]}), QUICK
        )
        assert failed_codes(listed) == {bomb.name: "source-too-large"}
        assert await asyncio.wait_for(host.sources.scan(), QUICK) is None  # nothing read
        os.utime(bomb, None)
        again = await asyncio.wait_for(host.sources.scan(), QUICK)
        assert again is not None
        assert failed_codes(again) == {bomb.name: "source-too-large"}
    finally:
        await host.close()


def test_colliding_source_ids_stay_apart(tmp_path: Path) -> None:
    """Claude Code sessions whose ids slug alike (`A_B`, `a-b`, `a.b`; ids of letters a
    slug drops): each was stored under one id, the later file replacing the earlier one's
    events while the header kept the first file's path."""
    projects = tmp_path / ".claude"
    (made,) = claude_projects(projects, sessions=1)
    data = made.read_bytes()
    made.unlink()
    weird = ["A_B", "a-b", "a.b", "ü", "é", "CaseID", "caseid"]
    for sid in weird:
        (made.parent / f"{sid}.jsonl").write_bytes(data.replace(made.stem.encode(), sid.encode()))
    store = str(tmp_path / "store")
    code, report = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert code == 0, report
    assert len(set(report["imported"])) == len(weird), report["imported"]
    code, rows = forkwise(tmp_path, "sessions", "list", "--store", store)
    assert code == 0, rows
    paths = set()
    for row in rows:
        code, shown = forkwise(tmp_path, "sessions", "show", row["id"], "--store", store)
        assert code == 0, shown
        paths.add(shown["header"]["meta"]["source"]["path"])
    assert paths == {str(made.parent / f"{sid}.jsonl") for sid in weird}
    # a second import finds each unchanged under its own id
    code, again = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert (code, sorted(again["unchanged"])) == (0, sorted(report["imported"])), again


def test_a_pi_parent_session_outside_pi_s_folders_is_not_opened(tmp_path: Path) -> None:
    """A pi header's `parentSession` is the file's to write: it named any path, and the
    import opened it (/etc/shadow, /proc/self/environ). Outside pi's folders and the
    file's own, only a regular `*.jsonl` whose first line is a pi header is read (an
    export's --out); anything else is named by its file name and not opened. A FIFO
    there tells: a writer waiting on it gets through when anything opens it."""
    import threading
    import time

    from forkwise.core.formats.base import source_session_id
    from forkwise.core.formats.pi.reader import PiReader
    from tests.formats.pi_fixtures import PiSession

    parent = PiSession("0193a1b2-0000-7000-8000-0000000000aa")
    parent.user("one")
    parent.assistant("first")
    named = "0193a1b2-0000-7000-8000-0000000000dd"
    folder = tmp_path / "sessions" / "--home-ada-project--"

    def child_of(parent_path: Path, sid: str) -> Path:
        child = PiSession(sid, parent_session=str(parent_path))
        child.adopt(parent.entry_lines())
        child.user("two")
        child.assistant("second")
        return child.write(folder)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fifo = elsewhere / f"2025-12-08T22-41-05-000Z_{named}.jsonl"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer() -> None:
        os.close(os.open(fifo, os.O_WRONLY))  # returns once a reader opened the FIFO
        opened.set()

    waiting = threading.Thread(target=writer, daemon=True)
    waiting.start()
    (fork,) = PiReader().read(child_of(fifo, "0193a1b2-0000-7000-8000-0000000000bb"))
    time.sleep(0.2)
    assert not opened.is_set(), "the parent named outside pi's folders was opened"
    assert fork.parent == source_session_id("pi", named)  # named by its file name
    release = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    waiting.join(5)
    os.close(release)
    # a pi session file elsewhere (an export's --out) is still read: its lineage is kept
    outside = parent.write(tmp_path / "exported")
    (fork,) = PiReader().read(child_of(outside, "0193a1b2-0000-7000-8000-0000000000cc"))
    assert fork.parent == source_session_id("pi", parent.session_id)


#: a file rewound (Claude Code) or branched (pi) at every turn: a branch per turn, each
#: sharing the turns before
REWINDS = 1_500

#: runs argv in a process of its own, whose only child it is: prints the child's peak RSS
_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, timeout=900)\n"
    "sys.stderr.buffer.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def import_branched(tmp_path: Path, tool: str, source: Path, folder: Path) -> dict[str, Path]:
    """Import `folder` (holding the one file `source`) with a real `forkwise` process:
    ≤ 3x the source on disk and ≤ 300 MB peak for that process, one stored file per
    branch; the stored files by session id."""
    store = tmp_path / "store"
    argv = [FORKWISE, "sessions", "import", "--from", tool, "--store", str(store),
            str(folder), "--json"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *argv], capture_output=True, text=True, timeout=960,
        env=child_env(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data")), check=False,
    )  # fmt: skip
    code, peak_kb = (int(x) for x in done.stdout.split())
    assert code == 0, done.stderr
    files = {p.stem: p for p in (store / "sessions").glob("*.jsonl")}
    assert len(files) == REWINDS + 1
    ratio = sum(p.stat().st_size for p in files.values()) / source.stat().st_size
    assert ratio <= 3.0, f"the store is {ratio:.1f}x the source"
    assert peak_kb <= 300 * 1024, f"the import peaked at {peak_kb / 1024:.0f} MB"
    return files


def assert_branches_read_as_copies(store: Path, files: dict[str, Path], every: int = 1) -> None:
    """Every branch (`every`: each so many-th, by id; reading them all takes minutes) reads
    as the full copy did: its parent's first seedLength events, then its own (read off the
    files here, not through the store's own reading)."""
    from forkwise.core.store.backends.jsonl import JsonlBackend
    from forkwise.core.store.session_store import SessionStore

    def lines(sid: str) -> list[bytes]:
        return files[sid].read_bytes().splitlines()

    opened = SessionStore(JsonlBackend(store, writable=False))
    try:
        for sid in sorted(files)[::every]:
            header = orjson.loads(lines(sid)[0])
            got = [e.encode() for e in opened.get(sid).events]
            if header["parentSession"] is None:
                assert got == lines(sid)[1:]
                opened.release([sid])
                continue
            seed = header["seedLength"]
            assert header["seedIn"]["session"] == header["parentSession"]
            expected = lines(header["parentSession"])[1 : seed + 1] + lines(sid)[1:]
            assert orjson.loads(expected[seed]) | {"ts": None, "seq": 0} == {
                "seq": 0, "type": "history/fork", "ts": None, "source": header["parentSession"],
                "boundary": seed, "relation": "fork"}  # fmt: skip
            assert got == expected, sid
            opened.release([sid])  # one at a time, as the app reads them: not all held
    finally:
        opened.close()


def test_a_file_rewound_at_every_turn_is_stored_in_linear_space(tmp_path: Path) -> None:
    """Each branch of an imported file stored a copy of the turns it shares with the line
    it left: 1,500 rewinds of a 3 MB file made over a GB of store and held 6 GB while the
    import ran. Now ≤ 3x the source on disk, ≤ 300 MB peak for the real import process,
    and every branch reads as the full copy did."""
    from forkwise.core.bench.synth_sources import claude_rewound

    source = claude_rewound(tmp_path / ".claude", REWINDS)
    files = import_branched(tmp_path, "claude", source, source.parents[1])
    assert_branches_read_as_copies(tmp_path / "store", files)


def test_a_pi_file_branched_at_every_turn_imports_in_bounded_memory(tmp_path: Path) -> None:
    """pi's reader kept a full copy of its converter's state (the events so far, the ids
    given) at each of the main line's 1,500 branch points while it converted the main
    line: 2 MB of file peaked at 340 MB. Now a mark of how far each of those had got, so
    the import stays ≤ 300 MB and ≤ 3x the source on disk, every branch as the copy was."""
    from forkwise.core.bench.synth_sources import pi_rewound

    source = pi_rewound(tmp_path / ".pi" / "agent", REWINDS)
    files = import_branched(tmp_path, "pi", source, source.parents[1])
    assert_branches_read_as_copies(tmp_path / "store", files, every=50)
