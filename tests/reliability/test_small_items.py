"""Issue 18, item 11: the smaller findings. A NUL in an imported header's cwd fails the
file tools with words, not an internal error; a token file others can read is named."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from tests.reliability.conftest import FORKWISE, run


@pytest.mark.asyncio
async def test_a_nul_in_an_imported_cwd_fails_file_tools_with_words(tmp_path: Path) -> None:
    header = {"type": "session", "version": 1, "id": "nul-cwd", "created": "2026-01-01T00:00:00Z",
              "cwd": "/tmp/a\x00b", "parentSession": None, "seedLength": 0, "meta": {}}  # fmt: skip
    source = tmp_path / "nul.jsonl"
    source.write_bytes(orjson.dumps(header) + b"\n")
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    client = await Client.in_process(host)
    try:
        report = await client.import_files([str(source)], "forkwise")
        assert report["imported"] == ["nul-cwd"], report
        for tool in ("list_dir", "read_file"):
            asked = await client.prompt_and_wait("nul-cwd", f'/tool {tool} {{"path": "x"}}')
            done = await client.approve_and_wait("nul-cwd", asked["approvals"][0]["approval"], True)
            assert done["status"] == "completed", done
            result = [e for e in await client.events("nul-cwd") if e["type"] == "tool/result"][-1]
            text = orjson.dumps(result).decode()
            assert "NUL character" in text, result
            assert "internal error" not in text
    finally:
        await client.close()
        await host.close()


def test_a_token_file_others_can_read_is_named(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("secret-token-value\n")
    os.chmod(token, 0o644)
    done = run([FORKWISE, "sessions", "list", "--connect", "tcp:127.0.0.1:9", "--token-file",
                str(token)])  # fmt: skip
    assert "can be read by other users (mode 0644)" in done.stderr, done.stderr
    os.chmod(token, 0o600)
    done = run([FORKWISE, "sessions", "list", "--connect", "tcp:127.0.0.1:9", "--token-file",
                str(token)])  # fmt: skip
    assert "other users" not in done.stderr
    assert "secret-token-value" not in done.stderr + done.stdout


def test_an_imported_header_is_kept_byte_for_byte(tmp_path: Path) -> None:
    line = (b'{"type":"session","version":1,"id":"big-meta","created":"2026-01-01T00:00:00Z",'
            b'"cwd":"/tmp","parentSession":null,"seedLength":0,'
            b'"meta":{"n":1000000000000000000000000000000,"s":"\\u00e9"}}')  # fmt: skip
    event = b'{"seq":1,"type":"session/title","ts":"2026-01-01T00:00:01Z","title":"t"}'
    source = tmp_path / "big.jsonl"
    source.write_bytes(line + b"\n" + event + b"\n")
    store = tmp_path / "store"
    done = run([FORKWISE, "sessions", "import", str(source), "--store", str(store), "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert (store / "sessions" / "big-meta.jsonl").read_bytes() == source.read_bytes()
