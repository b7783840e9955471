"""Issue 18, item 11: the smaller findings. A NUL in an imported header's cwd fails the
file tools with words, not an internal error; a token file others can read is named."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from polling import until

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


@pytest.mark.asyncio
async def test_a_turn_left_by_a_killed_host_does_not_list_as_running(tmp_path: Path) -> None:
    import select
    import subprocess
    import tempfile

    from tests.reliability.conftest import TIMEOUT, child_env

    sock_dir = Path(tempfile.mkdtemp(prefix="fwkh-", dir="/tmp"))
    store = tmp_path / "store"
    proc = subprocess.Popen(
        [FORKWISE, "host", "--store", str(store), "--listen", f"unix:{sock_dir}/h.sock"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        proc.stdout.readline()
        client = await Client.connect(f"unix:{sock_dir}/h.sock", None, follow=False)
        try:
            sid = (await client.create_session("crashed", cwd="/tmp"))["id"]
            await client.prompt(sid, "/slow " + "word " * 400)
            log = store / "sessions" / f"{sid}.jsonl"
            await until(lambda: b'"turn/start"' in log.read_bytes(), 20.0, "the turn's start")
        finally:
            await client.close()
        proc.kill()  # SIGKILL mid-turn: the turn stays open in the log
        proc.wait(TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=TIMEOUT)
        for child in sock_dir.iterdir():
            child.unlink()
        sock_dir.rmdir()
    assert b'"turn/start"' in log.read_bytes()
    assert b'"turn/end"' not in log.read_bytes()
    done = run([FORKWISE, "sessions", "list", "--store", str(store), "--json"])
    assert done.returncode == 0, done.stderr
    (row,) = orjson.loads(done.stdout)
    assert row["running"] is False, row
    assert row["interrupted"] is True
    assert b'"turn/end"' not in log.read_bytes()  # reading changed nothing
