"""The store's trash through the CLI (`sessions delete`, `trash`, `restore`, `trash
--empty`): the same verbs the app's Trash window calls, on a real store folder."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.cli import main as cli
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session_store import SessionStore


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue())


def test_deleted_sessions_are_listed_restored_and_emptied(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for sid, title in (("plan", "Plan the release"), ("notes", "Meeting notes"),
                       ("keep", "Kept")):  # fmt: skip
        code, made = run_json("sessions", "new", "--id", sid, "--title", title,
                              "--store", str(store))  # fmt: skip
        assert code == 0, made
    assert run_json("sessions", "trash", "--store", str(store)) == (0, [])
    for sid in ("plan", "notes"):
        assert run_json("sessions", "delete", sid, "--store", str(store))[0] == 0

    code, kept = run_json("sessions", "trash", "--store", str(store))
    assert code == 0
    assert [(r["id"], r["title"]) for r in kept] == [
        ("notes", "Meeting notes"), ("plan", "Plan the release")]  # the latest deleted first
    assert all(r["deletedAt"].startswith("20") for r in kept)
    out, err = io.StringIO(), io.StringIO()  # what a person reads
    assert cli.main(["sessions", "trash", "--store", str(store)], out=out, err=err) == 0
    assert "Meeting notes" in out.getvalue()
    assert "Plan the release" in out.getvalue()

    code, row = run_json("sessions", "restore", "plan", "--store", str(store))
    assert (code, row["id"], row["title"]) == (0, "plan", "Plan the release")
    code, listed = run_json("sessions", "list", "--store", str(store))
    assert sorted(r["id"] for r in listed) == ["keep", "plan"]

    code, emptied = run_json("sessions", "trash", "--empty", "--store", str(store))
    assert (code, emptied) == (0, {"removed": ["notes"]})
    assert run_json("sessions", "trash", "--store", str(store)) == (0, [])
    assert list((store / "trash").iterdir()) == []  # gone for good
    code, refused = run_json("sessions", "restore", "notes", "--store", str(store))
    assert code != 0
    assert refused["error"]["code"] == "source-not-found"


def test_emptying_one_session_leaves_the_others(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for sid in ("one", "two"):
        run_json("sessions", "new", "--id", sid, "--title", sid, "--store", str(store))
        run_json("sessions", "delete", sid, "--store", str(store))
    code, emptied = run_json("sessions", "trash", "--empty", "one", "--store", str(store))
    assert (code, emptied) == (0, {"removed": ["one"]})
    code, kept = run_json("sessions", "trash", "--store", str(store))
    assert [r["id"] for r in kept] == ["two"]


@pytest.mark.parametrize("twice", [False, True])
def test_the_memory_backend_keeps_a_trash_too(twice: bool) -> None:
    """The store's verbs over the in-memory backend: the same answers as the folder's."""
    store = SessionStore(MemoryBackend())
    store.create(session_id="a", meta={"title": "Alpha"})
    store.delete("a")
    if twice:  # made again under the same id and deleted again: one entry, the latest
        store.create(session_id="a", meta={"title": "Alpha again"})
        store.delete("a")
    (kept,) = store.trashed()
    assert kept.session_id == "a"
    assert kept.summary is not None
    assert kept.summary.title == ("Alpha again" if twice else "Alpha")
    assert store.empty_trash() == ["a"]
    assert store.trashed() == []
