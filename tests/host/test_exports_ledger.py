"""`<store>/exports.json` (what Continue in <agent> wrote) is rebuilt from the
export events in the logs when it is lost or unreadable, so that the exported file still
comes back beneath the session it continues; a record whose file is gone and whose session
was imported is dropped, one whose file was never imported is kept. Through the CLI, on
real files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import claude_fixtures as cf
from test_continued_in import assert_beneath, fork_prompt_export, imported_claude, rows, run_json

from forkwise.core.host.import_ledger import ImportLedger, exports_in_logs
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore


def records(store: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((Path(store) / "exports.json").read_bytes())
    return dict(data["exports"])


def undated(exports: dict[str, Any]) -> dict[str, Any]:
    """The records without when each export was written (checked to be a time)."""
    for record in exports.values():
        assert isinstance(record.pop("at"), str)
    return exports


@pytest.mark.parametrize("damage", ["lost", "corrupt"])
def test_a_lost_exports_file_is_rebuilt_from_the_export_events_of_the_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    root, store, _ = imported_claude(tmp_path, monkeypatch)
    k, sent = fork_prompt_export(store, f"claude-{cf.SID}", "claude")
    ledger = Path(store) / "exports.json"
    before = records(store)
    if damage == "lost":
        ledger.unlink()
    else:
        ledger.write_bytes(b'{"version": 1, "exports": {"claude:')
    code, back = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert code == 0, back
    new = f"claude-{sent['id']}"
    assert back["imported"] == [new]
    # beneath the fork it continues, not a session of its own
    assert_beneath(store, new, k)
    assert (
        records(store) == before  # rebuilt with its time, from its event's
    )
    assert (
        undated(before) == {f"claude:{sent['id']}": {"session": k, "path": sent["path"]}}
    )


def test_records_of_files_gone_and_imported_are_pruned_the_others_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, store, _ = imported_claude(tmp_path, monkeypatch)
    k, first = fork_prompt_export(store, f"claude-{cf.SID}", "claude")
    code, back = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert (code, back["imported"]) == (0, [f"claude-{first['id']}"])
    code, second = run_json("sessions", "export", k, "--to", "claude", "--store", store)
    assert code == 0, second
    assert set(records(store)) == {f"claude:{first['id']}", f"claude:{second['id']}"}
    # both files are gone; only the first was imported
    Path(first["path"]).unlink()
    Path(second["path"]).unlink()
    code, again = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert code == 0, again
    assert undated(records(store)) == {
        f"claude:{second['id']}": {"session": k, "path": second["path"]}
    }
    assert f"claude-{first['id']}" in rows(store)  # the session it gave stays


def test_the_logs_hold_the_exports_of_forkwise_sessions_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An imported session's log follows its source: its export leaves no event, so a lost
    exports.json cannot bring its record back (the limit of the rebuild)."""
    _root, store, _ = imported_claude(tmp_path, monkeypatch)
    k, mine = fork_prompt_export(store, f"claude-{cf.SID}", "claude")
    code, theirs = run_json(
        "sessions", "export", f"claude-{cf.SID}", "--to", "claude", "--store", store
    )
    assert code == 0, theirs
    assert len(records(store)) == 2
    opened = SessionStore(JsonlBackend(Path(store), writable=False))
    try:
        assert undated(exports_in_logs(opened)) == {
            f"claude:{mine['id']}": {"session": k, "path": mine["path"]}
        }
        # a ledger without a store to ask keeps what the file says, unpruned
        assert (
            ImportLedger(Path(store) / "imports.json").exported_from("claude", theirs["id"])
            == f"claude-{cf.SID}"
        )
    finally:
        opened.close()
