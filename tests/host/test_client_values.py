"""The typed values a front end reads of the client's answers (core/client/reports.py,
session_info.py), checked against what a real host answers: nothing a field promises is
missing or of another type, and what the host said is what the field says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forkwise.core.client.client import Client
from forkwise.core.client.reports import import_report, usage_part, usage_report
from forkwise.core.client.session_info import imported_from, source_state
from forkwise.core.host.host import Host

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
from claude_fixtures import SID, Transcript


@pytest.mark.asyncio
async def test_import_usage_and_session_answers_read_as_typed_values(tmp_path: Path) -> None:
    chat = Transcript(SID)
    chat.exchange("hello", "hi")
    path = chat.write(tmp_path / "claude" / f"{SID}.jsonl")
    torn = tmp_path / "claude" / "torn.jsonl"
    torn.write_bytes(path.read_bytes().replace(b"\n", b"\n{torn\n", 1))
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    client = await Client.in_process(host)
    try:
        raw = await client.import_files([str(path), str(torn), str(tmp_path / "absent.jsonl")],
                                        tool="claude")
        report = import_report(raw)
        # the same session twice: imported from one file, brought up to date by the other
        assert report["imported"] == report["updated"] == [f"claude-{SID}"]
        (failed,) = report["failed"]  # the absent file
        assert (failed["path"], failed["line"]) == (str(tmp_path / "absent.jsonl"), None)
        assert failed["error"]["code"] == "storage-error"
        (kept,) = report["warnings"]  # the torn line
        assert (kept["path"], kept["line"], kept["code"]) == (str(torn), 2, "unreadable-line")
        assert report["unmapped"] == raw["unmapped"]
        assert report["unmapped"]["unreadable"] == 1
        sid = f"claude-{SID}"
        info = await client.get_session(sid)
        assert imported_from(info) == {"path": str(path), "id": SID}
        assert source_state(info) is None  # not a fork
        child = (await client.fork(sid))["id"]
        state = source_state(await client.get_session(child))
        assert state is not None
        assert state["sourceId"] == sid
        assert state["missing"] is False
        assert state["changed"] in (False, None)
        usage = usage_report(await client.usage(sid))
        assert usage["own"] == usage_part((await client.usage(sid))["own"])
        assert set(usage["total"]) == {"input", "output", "cacheRead", "cacheWrite", "reasoning",
                                       "cost"}
    finally:
        await client.close()
        await host.close()
