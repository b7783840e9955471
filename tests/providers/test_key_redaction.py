"""Issue 18, item 2: the API key never reaches the log or stderr, whatever an endpoint or a
model echoes — a key cut by clipping, a key in malformed tool-call arguments, the key in
other letter cases, a long piece of it. Real turns over a real host socket to a real
HTTP endpoint on 127.0.0.1; then every byte the app wrote is searched for any piece of the
key."""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server, chunk

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.shared_store import StoreEndpoint
from forkwise.core.runtime.providers.offline import OfflineProvider
from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider
from forkwise.core.runtime.providers.redact import PIECE, redact

#: a piece this long found anywhere counts as a leak
LEAK = 12


def pieces(key: str) -> set[bytes]:
    low = key.lower()
    return {low[i : i + LEAK].encode() for i in range(len(low) - LEAK + 1)}


def leaks(data: bytes, key: str) -> bool:
    low = data.lower()
    return any(p in low for p in pieces(key))


def test_redaction_masks_pieces_in_any_case() -> None:
    key = "sk-" + "a1B2c3D4e5" * 4
    assert redact(f"x {key} y", key) == "x *** y"
    assert redact(f"x {key.upper()} y", key) == "x *** y"
    assert redact(f"cut {key[:PIECE]}|{key[-PIECE - 3:]}", key) == "cut ***|***"
    assert redact(f"short {key[:PIECE - 1]}", key) == f"short {key[:PIECE - 1]}"
    assert redact("nothing here", key) == "nothing here"


@pytest.mark.asyncio
async def test_no_piece_of_the_key_reaches_the_log_stderr_or_a_client(
    server: Server,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = f"sk-proj-{secrets.token_hex(19)}Ab"  # 48 characters, mixed case
    store = Path(f"/tmp/fw-red-{secrets.token_hex(4)}") / "store"
    caplog.set_level(logging.DEBUG)
    provider = OpenAICompatibleProvider(server.base_url, "m", api_key=key, timeout=5.0)
    host = Host.open(store, default_cwd=str(tmp_path),
                     providers={"offline": OfflineProvider(), "openai": provider})  # fmt: skip
    endpoint = await StoreEndpoint.start(host, store)
    assert endpoint is not None
    seen: list[Any] = []
    outcomes: list[dict[str, Any]] = []
    bad_args = '{"path": "' + key  # not JSON: the model echoed the key and stopped
    call = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": bad_args}}
    scripts = [
        # a long message echoing the header: the key crosses the old 500-character cut
        lambda: server.respond(
            401, orjson.dumps({"error": {"message": "x" * 470 + f" Authorization: Bearer {key}"}})
        ),
        lambda: server.stream([chunk(tool_calls=[call]), chunk(finish="tool_calls")]),
        lambda: server.respond(500, f"BAD KEY {key.upper()}".encode(), "text/plain"),
        lambda: server.respond(403, f"key ending {key[-20:]} refused".encode(), "text/plain"),
    ]
    try:
        client = await Client.connect(endpoint.address)
        await client.subscribe(seen.append)
        try:
            sid = (await client.create_session("keyed"))["id"]
            await client.set_model(sid, "openai", "m")
            for n, script in enumerate(scripts):
                script()
                outcomes.append(await client.prompt_and_wait(sid, f"turn {n}"))
            seen.append(await client.events(sid))
        finally:
            await client.close()
    finally:
        await endpoint.close()
        await host.close()
    try:
        assert [o["status"] for o in outcomes] == ["failed"] * 4, outcomes
        assert all(r.headers["authorization"] == f"Bearer {key}" for r in server.requests)
        assert "Check the API key" in outcomes[0]["error"]
        captured = capsys.readouterr()
        haystacks = {
            **{str(p): p.read_bytes() for p in store.rglob("*") if p.is_file()},
            "log": caplog.text.encode(),
            "log records": repr([(r.msg, r.args, r.exc_info) for r in caplog.records]).encode(),
            "stdout": captured.out.encode(),
            "stderr": captured.err.encode(),
            "client": orjson.dumps(seen, default=str),
            "outcomes": orjson.dumps(outcomes, default=str),
        }
        assert [name for name, data in haystacks.items() if leaks(data, key)] == []
        assert all("***" in o["error"] for o in outcomes)  # scrubbed, not dropped
    finally:
        shutil.rmtree(store.parent, ignore_errors=True)
