"""Issue 18, item 1: reading a store changes nothing, and a writer creates a store only in
a new, empty or store folder, never re-modes a folder it did not make, and never follows a
symbolic link to change its target. Real `forkwise` processes on real folders."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson

from tests.reliability.conftest import FORKWISE, run


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every name under `root` (links not followed) with its mode and size."""
    out = {".": (os.lstat(root).st_mode, 0)}
    for path in root.rglob("*"):
        st = os.lstat(path)
        out[str(path.relative_to(root))] = (st.st_mode, st.st_size)
    return out


def forkwise(*argv: str) -> tuple[int, dict[str, object]]:
    done = run([FORKWISE, *argv, "--json"])
    text = done.stdout.strip() or "{}"
    return done.returncode, orjson.loads(text)


def test_read_commands_change_nothing_in_a_shared_folder(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "someone-elses.txt").write_text("keep")
    before = snapshot(shared)
    for argv in (["sessions", "list"], ["sessions", "show", "nope"]):
        forkwise(*argv, "--store", str(shared))
    assert snapshot(shared) == before


def test_a_write_refuses_a_folder_that_is_not_a_store(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "someone-elses.txt").write_text("keep")
    before = snapshot(shared)
    code, out = forkwise("sessions", "new", "--store", str(shared))
    assert code == 1
    assert out["error"]["code"] == "storage-error", out  # type: ignore[index]
    assert snapshot(shared) == before


def test_a_store_in_an_empty_folder_keeps_the_folders_mode(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    os.chmod(empty, 0o1777)
    code, out = forkwise("sessions", "new", "--store", str(empty), "--id", "s1")
    assert code == 0, out
    assert stat.S_IMODE(os.lstat(empty).st_mode) == 0o1777  # sticky bit and all kept
    assert stat.S_IMODE(os.lstat(empty / "sessions").st_mode) == 0o700  # made here: private
    assert stat.S_IMODE(os.lstat(empty / "sessions" / "s1.jsonl").st_mode) == 0o600
    # a second write finds a store there now, with no stranger in it
    code, out = forkwise("sessions", "new", "--store", str(empty), "--id", "s2")
    assert code == 0, out


def test_links_in_a_store_are_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chmod(elsewhere, 0o755)
    victim = tmp_path / "victim.txt"
    victim.write_text("not a lock")
    os.chmod(victim, 0o644)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "sessions").symlink_to(elsewhere)
    code, out = forkwise("sessions", "new", "--store", str(linked))
    assert code == 1, out
    assert out["error"]["code"] == "storage-error", out  # type: ignore[index]
    assert stat.S_IMODE(os.stat(elsewhere).st_mode) == 0o755
    assert list(elsewhere.iterdir()) == []
    locked = tmp_path / "locked"
    (locked / "sessions").mkdir(parents=True)
    (locked / "writer.lock").symlink_to(victim)
    code, out = forkwise("sessions", "new", "--store", str(locked))
    assert code == 1, out
    assert out["error"]["code"] == "storage-error", out  # type: ignore[index]
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o644
    assert victim.read_text() == "not a lock"
