"""Exports never replace anything: `--out` naming an ordinary file, another tool's
session, the session's own source, a folder, a FIFO or a link fails with `exists` and
leaves it as it was; files are written through an O_EXCL temporary file of a random name
and are 0600 in 0700 folders whatever the umask. Real `forkwise` processes, each with a
deadline (a FIFO opened for writing would wait for a reader)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_projects
from tests.reliability.conftest import FORKWISE, child_env

QUICK = 30.0
TOOLS = ("claude", "codex", "pi")


def forkwise(home: Path, *argv: str) -> tuple[int, Any]:
    folders = {"CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / "codex"),
               "PI_CODING_AGENT_DIR": str(home / ".pi")}  # fmt: skip
    done = subprocess.run(
        [FORKWISE, *argv, "--json"], capture_output=True, text=True, timeout=QUICK,
        env=child_env(HOME=str(home), **folders), check=False,
        preexec_fn=lambda: os.umask(0o022),  # a usual umask: modes must come from the code
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, orjson.loads(done.stdout)


@pytest.fixture
def session(tmp_path: Path) -> str:
    """A store with session `s` (a title and a completed turn)."""
    store = str(tmp_path / "store")
    code, made = forkwise(tmp_path, "sessions", "new", "--store", store, "--id", "s",
                          "--title", "named", "--cwd", str(tmp_path))  # fmt: skip
    assert code == 0, made
    code, done = forkwise(tmp_path, "sessions", "prompt", "s", "hello", "--store", store)
    assert code == 0, done
    return store


def refused(tmp_path: Path, store: str, sid: str, tool: str, out: Path) -> None:
    code, made = forkwise(
        tmp_path, "sessions", "export", sid, "--to", tool, "--out", str(out), "--store", store
    )
    assert code == 1, (tool, out, made)
    assert made["error"]["code"] == "exists", (tool, out, made)


def test_an_export_replaces_no_file_folder_fifo_or_link(tmp_path: Path, session: str) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("mine\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere.jsonl")
    for tool in TOOLS:
        for out in (plain, folder, fifo, link, dangling):
            refused(tmp_path, session, "s", tool, out)
    assert plain.read_text() == "mine\n"
    assert victim.read_text() == "not yours\n"
    assert not (tmp_path / "nowhere.jsonl").exists()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_an_export_replaces_no_session_not_even_its_own_source(tmp_path: Path) -> None:
    """Exported over its own source, the next import would have read the export as the
    source and corrupted the stored session; over another tool's session, it was lost."""
    (source,) = claude_projects(tmp_path / ".claude", sessions=1)
    store = str(tmp_path / "store")
    code, report = forkwise(tmp_path, "sessions", "import", "--from", "claude", "--store", store)
    assert code == 0, report
    (sid,) = report["imported"]
    before = source.read_bytes()
    for tool in TOOLS:
        refused(tmp_path, store, sid, tool, source)
    assert source.read_bytes() == before
    # another tool's session: the export made just now, written over by the next one
    code, made = forkwise(tmp_path, "sessions", "export", sid, "--to", "codex", "--store", store)
    assert code == 0, made
    other = Path(made["path"])
    kept = other.read_bytes()
    for tool in TOOLS:
        refused(tmp_path, store, sid, tool, other)
    assert other.read_bytes() == kept


def test_exported_files_are_private(tmp_path: Path, session: str) -> None:
    for tool in TOOLS:
        code, made = forkwise(tmp_path, "sessions", "export", "s", "--to", tool, "--store", session)
        assert code == 0, made
        path = Path(made["path"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, (tool, oct(path.stat().st_mode))
        root = {"claude": tmp_path / ".claude", "codex": tmp_path / "codex",
                "pi": tmp_path / ".pi"}[tool]  # fmt: skip
        folder = path.parent
        while folder not in (root, tmp_path):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, (tool, folder)
            folder = folder.parent
