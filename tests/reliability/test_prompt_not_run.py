"""A prompt the host could not even start (its turn/start was not written) is an error for
the CLI, never an empty success."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from forkwise.core.cli import main as cli
from forkwise.core.errors import StorageError
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import EventsAppended, StoreEvent


def test_a_prompt_whose_turn_cannot_be_written_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = str(tmp_path / "store")
    out = io.StringIO()
    assert cli.main(["sessions", "new", "--store", store, "--json"], out=out) == 0
    sid = orjson.loads(out.getvalue())["id"]
    before = (tmp_path / "store" / "sessions" / f"{sid}.jsonl").read_bytes()
    persist = JsonlBackend.persist

    def disk_full(self: JsonlBackend, change: StoreEvent) -> None:
        if isinstance(change, EventsAppended):
            raise StorageError("writing to the store failed: [Errno 28] No space left on device")
        persist(self, change)

    monkeypatch.setattr(JsonlBackend, "persist", disk_full)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sessions", "prompt", sid, "hello", "--store", store], out=out, err=err)
    assert code == 1
    assert "did not run" in err.getvalue()
    assert "No space left on device" in err.getvalue()  # the reason reaches the person
    assert out.getvalue() == ""
    assert (tmp_path / "store" / "sessions" / f"{sid}.jsonl").read_bytes() == before
    assert "No space left" in caplog.text  # the cause is in the log
