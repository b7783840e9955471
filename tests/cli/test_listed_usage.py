"""`sessions list --json` gives each session's own usage as the summary index keeps it:
the same `usage.own` as `sessions usage`, while no session file is opened (a Python audit
hook sees every `open` of the process, the host's worker threads' too). The index keeps it
through an append, a fork, a re-import of a grown source and a rebuild of the index."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.cli import main as cli
from forkwise.core.log.usage import usage_draft
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
from claude_fixtures import MODEL, SID, Transcript

#: paths the process opened while `_watching` holds a folder (the hook cannot be removed)
_opened: list[str] = []
_watching: list[str] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _watching and args and isinstance(args[0], str | bytes | Path):
        path = str(args[0] if not isinstance(args[0], bytes) else args[0].decode())
        if path.startswith(_watching[0]):
            _opened.append(path)


sys.addaudithook(_hook)


def run_json(*argv: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    assert code == 0, err.getvalue()
    return orjson.loads(out.getvalue())


def listed_without_opening_a_log(store: Path) -> dict[str, dict[str, Any]]:
    """The listing's rows by id; fails when it opened any session file."""
    _opened.clear()
    _watching.append(str(store / "sessions"))
    try:
        rows = run_json("sessions", "list", "--store", str(store))
    finally:
        _watching.clear()
    assert _opened == []
    return {row["id"]: row for row in rows}


def assert_listed_as_reported(store: Path) -> dict[str, dict[str, Any]]:
    rows = listed_without_opening_a_log(store)
    for sid, row in rows.items():
        report = run_json("sessions", "usage", sid, "--store", str(store))
        assert row["usage"]["own"] == report["own"], sid
    return rows


def branched(t: Transcript) -> None:
    """Two exchanges, then a branch from inside the second turn (after its tool result):
    the branch's log repeats that turn's first reply, which is its source's."""
    t.exchange("first question", "first answer")
    turn = t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    end = t.last
    t.last = turn["result"]
    t.exchange("no, list the tests", "There is one test.")
    t.last = end
    t.exchange("thanks", "You are welcome.")


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Path, Transcript]:
    t = Transcript(SID)
    branched(t)
    path = t.write(tmp_path / "claude" / f"{SID}.jsonl")
    store = tmp_path / "store"
    report = run_json("sessions", "import", "--from", "claude", str(path), "--store", str(store))
    assert len(report["imported"]) == 2
    return store, path, t


def test_a_listing_gives_each_sessions_own_usage_without_opening_a_log(
    imported: tuple[Path, Path, Transcript],
) -> None:
    store, _, _ = imported
    rows = assert_listed_as_reported(store)
    assert all(row["usage"]["own"]["output"] > 0 for row in rows.values())
    # the branch's repeated reply is its source's: each session's own parts add up to
    # the whole file once (the source's own part is all of it)
    main = f"claude-{SID}"
    report = run_json("sessions", "usage", main, "--store", str(store))
    assert report["shared"]["output"] == 0


def test_the_index_keeps_usage_through_append_fork_reimport_and_rebuild(
    imported: tuple[Path, Path, Transcript],
) -> None:
    store, path, t = imported
    main = f"claude-{SID}"
    # an append through the store
    s = SessionStore(JsonlBackend(store))
    s.append(main, [usage_draft(MODEL, {"input": 7, "output": 11}, message="msg_appended")])
    s.close()
    rows = assert_listed_as_reported(store)
    # a fork, and an append to it: its own part is the appended record alone
    child = run_json("sessions", "fork", main, "--store", str(store))["child"]
    s = SessionStore(JsonlBackend(store))
    s.append(child, [usage_draft(MODEL, {"input": 3, "output": 5}, message="msg_child")])
    s.close()
    rows = assert_listed_as_reported(store)
    assert (rows[child]["usage"]["own"]["input"], rows[child]["usage"]["own"]["output"]) == (3, 5)
    # a re-import of the source grown by one exchange
    t.exchange("one more", "One more answer.")
    t.write(path)
    run_json("sessions", "import", "--from", "claude", str(path), "--store", str(store))
    before = assert_listed_as_reported(store)
    # the index gone: the next listing reads the logs and keeps their usage again
    (store / "index.json").unlink()
    run_json("sessions", "list", "--store", str(store))
    after = assert_listed_as_reported(store)
    assert {k: r["usage"] for k, r in after.items()} == {k: r["usage"] for k, r in before.items()}


def test_an_import_leaves_an_index_entry_for_each_session_it_stored(
    imported: tuple[Path, Path, Transcript],
) -> None:
    """The files an import names after their fsync are indexed as the import left them
    (the index entry of a file whose identity changed after it was noted was dropped:
    every import's sessions were read again by the first listing)."""
    store, _, _ = imported
    entries = orjson.loads((store / "index.json").read_bytes())["sessions"]
    files = {p.name[: -len(".jsonl")] for p in (store / "sessions").glob("*.jsonl")}
    assert set(entries) == files
    assert all(type(entry["usage"]) is list for entry in entries.values())  # no head left
