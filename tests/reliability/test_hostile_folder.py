"""A hostile agent folder: FIFOs, devices, links out of the folder, decompression bombs
and colliding ids where Claude Code, Codex and pi keep their sessions. Nothing there hangs
an import or an export, fills memory, or is read through a link out of its folder; each
such file is reported by code and the good sessions beside it are imported.

Real `forkwise` processes with a deadline each: a hang fails the test, not the suite.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_projects
from tests.formats.codex_fixtures import basic
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
