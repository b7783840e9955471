"""An import reads its files in worker processes (`import_ahead`) and stores exactly what
one process reading them all would: the same session files, byte for byte, and the same
report — for files laid out on their own, files whose sessions branch from another file's,
a file whose sessions are stored already, and a file that cannot be read."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_projects, codex_home
from forkwise.core.host import importing
from forkwise.core.host.import_ledger import ImportLedger
from forkwise.core.host.importing import ImportReport, discover, import_sources
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.parallel_fold import PARALLEL_BYTES
from forkwise.core.store.session_store import SessionStore

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="worker processes read an import's files only with two cores or more",
)


def _aged(root: Path) -> None:
    """Every file an hour old: no turn reads as still being written, in either import."""
    past = time.time() - 3600
    for path in root.rglob("*.jsonl"):
        os.utime(path, (past, past))


def _stored(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "sessions").glob("*.jsonl"))}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _import(
    folder: Path, files: list[tuple[Path, str | None]], stored_first: list[tuple[Path, str | None]]
) -> tuple[ImportReport, float]:
    """An import of `files` into a new store holding the sessions of `stored_first`
    already (imported with a ledger of their own: this import's ledger does not know
    them); the report, and the CPU seconds of the processes it forked."""
    store = SessionStore(JsonlBackend(folder))
    try:
        import_sources(store, stored_first, ImportLedger(None))
        before = _children_cpu()
        report = import_sources(store, files, ImportLedger(folder / "imports.json"))
        return report, _children_cpu() - before
    finally:
        store.close()


def test_files_read_by_workers_are_stored_as_one_process_stores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude_projects(claude, megabytes=PARALLEL_BYTES / 1e6 + 2, seed=6)  # 2 files rewound
    codex_home(codex, 3)  # every tenth rollout a fork of the one before: another file's branch
    broken = claude / "projects" / "-home-dev-project1" / "broken.jsonl"
    broken.write_bytes(b'{"type": "user", "uuid": "u1", "message": {}}\n')  # names no session
    _aged(tmp_path)
    env = dict(os.environ)
    files = discover("claude", [claude], env, tmp_path) + discover("codex", [codex], env, tmp_path)
    stored_first = [f for f in files if f[0] != broken][3:4]  # stored, unknown to the ledger

    ahead, forked = _import(tmp_path / "ahead", files, stored_first)
    monkeypatch.setattr(importing, "_read_ahead", lambda path, tool, ledger: None)
    alone, forked_alone = _import(tmp_path / "alone", files, stored_first)

    assert forked > 0  # workers read files (before: an import forked nothing)
    assert forked_alone == 0
    assert orjson.dumps(ahead.to_json()) == orjson.dumps(alone.to_json())
    assert len(ahead.imported) >= len(files) - 2
    assert ahead.unchanged == alone.unchanged != []  # the file stored before, found so
    assert [f["path"] for f in ahead.failed] == [str(broken)]
    assert _stored(tmp_path / "ahead") == _stored(tmp_path / "alone")
    branches = [
        sid
        for sid, data in _stored(tmp_path / "ahead").items()
        if b'"parentSession":null' not in data.split(b"\n", 1)[0]
    ]
    assert any(b.startswith("codex-") for b in branches)  # branches of another file's session
    assert any(b.startswith("claude-") for b in branches)  # branches within a file
