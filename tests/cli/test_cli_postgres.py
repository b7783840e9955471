"""The command line on a store in PostgreSQL: `--store postgresql://…` and $FORKWISE_STORE
pick it, and `forkwise store copy` moves a whole store between a folder and a database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from test_cli import HAND_WRITTEN, run


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # this machine's files for a database store go to the user data dir: a temporary one
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "sessions").glob("*.jsonl"))}


def test_import_fork_list_show_on_a_database(pg_url: str, tmp_path: Path) -> None:
    src = tmp_path / "hand-1.jsonl"
    src.write_text(HAND_WRITTEN)
    assert run("sessions", "import", "--store", pg_url, str(src))[:2] == (0, "hand-1\n")
    code, out, _ = run("sessions", "fork", "hand-1", "--store", pg_url, "--json", "--child", "kid")
    assert (code, orjson.loads(out)) == (0, {"child": "kid", "seedLength": 6})
    code, out, _ = run("sessions", "list", "--store", pg_url, "--json")
    rows = {r["id"]: r for r in orjson.loads(out)}
    assert rows["hand-1"]["title"] == "Written by hand"
    assert (rows["kid"]["parentSession"], rows["kid"]["events"]) == ("hand-1", 8)


def test_forkwise_store_selects_the_database(pg_url: str, tmp_path: Path) -> None:
    """A separate `forkwise` process, the store named only by the environment."""
    env = {"FORKWISE_STORE": pg_url, "XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin"}
    made = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli.main", "sessions", "new", "--id", "env-1"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (made.returncode, made.stdout.strip()) == (0, "env-1"), made.stderr
    code, out, _ = run("sessions", "list", "--store", pg_url, "--json")
    assert (code, [r["id"] for r in orjson.loads(out)]) == (0, ["env-1"])


def test_store_copy_folder_to_database_and_back_is_byte_identical(
    pg_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "store"
    src = tmp_path / "hand-1.jsonl"
    src.write_text(HAND_WRITTEN)
    assert run("sessions", "import", "--store", str(folder), str(src))[0] == 0
    assert run("sessions", "fork", "hand-1", "--store", str(folder), "--child", "kid")[0] == 0
    before = tree_bytes(folder)
    code, out, _ = run("store", "copy", str(folder), pg_url, "--json")
    assert (code, orjson.loads(out)) == (0, {"copied": 2, "skipped": 0, "conflicts": [], "events": 10 + 8})
    # resumed (or repeated): nothing is copied twice
    code, out, _ = run("store", "copy", str(folder), pg_url, "--json")
    assert orjson.loads(out)["skipped"] == 2
    back = tmp_path / "back"
    assert run("store", "copy", pg_url, str(back))[0] == 0
    assert tree_bytes(back) == before
    # a session that differs in the destination is reported, not overwritten
    assert run("sessions", "new", "--store", str(back), "--id", "extra")[0] == 0
    other = tmp_path / "other"
    assert run("store", "copy", str(back), str(other))[0] == 0
    assert run("sessions", "truncate", "--store", str(other), "kid", "--message",
               "assistant:hi:0002")[0] == 0  # fmt: skip
    code, out, _ = run("store", "copy", str(back), str(other), "--json")
    assert (code, orjson.loads(out)["conflicts"]) == (1, ["kid"])


def test_store_copy_keeps_the_events_of_branches_stored_by_reference(
    pg_url: str, tmp_path: Path
) -> None:
    """A folder store whose imported branches hold their seed by reference to their
    parent's lines: copied into the database and back, every session reads the same
    events (the database and the copy back hold each seed whole)."""
    from forkwise.core.bench.synth_sources import claude_rewound

    source = claude_rewound(tmp_path / "claude", 6)
    folder = tmp_path / "store"
    code, out, _ = run("sessions", "import", "--from", "claude", "--store", str(folder),
                       str(source.parents[1]), "--json")  # fmt: skip
    ids = orjson.loads(out)["imported"]
    assert (code, len(ids)) == (0, 7)
    heads = [orjson.loads(p.read_bytes().split(b"\n", 1)[0]) for p in (folder / "sessions").glob("*.jsonl")]
    assert sum("seedIn" in h for h in heads) == 6

    def events(store: str) -> dict[str, list[object]]:
        shown = {sid: run("sessions", "show", sid, "--store", store, "--json") for sid in ids}
        assert all(code == 0 for code, _, _ in shown.values())
        return {sid: orjson.loads(out)["events"] for sid, (_, out, _) in shown.items()}

    before = events(str(folder))
    code, out, _ = run("store", "copy", str(folder), pg_url, "--json")
    assert (code, orjson.loads(out)["copied"]) == (0, 7)
    assert events(pg_url) == before
    back = tmp_path / "back"
    assert run("store", "copy", pg_url, str(back))[0] == 0
    assert events(str(back)) == before
