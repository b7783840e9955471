"""API keys never leak (issue 7): real turns through the OpenAI-compatible provider, with a
distinctive key from $FORKWISE_API_KEY, over the host and a real socket; then everything the
app wrote — store, config dir, logs, stdout/stderr, what clients received — is searched
for the key."""

from __future__ import annotations

import asyncio
import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server, chunk

from forkwise.core.cli import main as cli
from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.shared_store import StoreEndpoint
from forkwise.core.runtime.providers.offline import OfflineProvider
from forkwise.core.runtime.settings import (
    API_KEY_ENV,
    CONFIG_ENV,
    ProviderSettings,
    build_provider,
    load_settings,
    save_settings,
)


def everything_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.asyncio
async def test_the_api_key_is_sent_to_the_endpoint_and_written_nowhere(
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = f"sk-fw-leakcheck-{secrets.token_hex(12)}"
    config, store = tmp_path / "config", Path(f"/tmp/fw-key-{secrets.token_hex(4)}") / "store"
    monkeypatch.setenv(API_KEY_ENV, key)
    monkeypatch.setenv(CONFIG_ENV, str(config))
    caplog.set_level(logging.DEBUG)  # httpx, httpcore and ours, everything
    save_settings(ProviderSettings("openai", server.base_url, "leak-model", timeout=5.0))
    provider = build_provider(load_settings())
    assert key not in repr(provider)
    host = Host.open(store, default_cwd=str(tmp_path),
                     providers={"offline": OfflineProvider(), "openai": provider})
    endpoint = await StoreEndpoint.start(host, store)
    assert endpoint is not None
    seen_by_client: list[Any] = []
    outcomes: list[dict[str, Any]] = []
    try:
        client = await Client.connect(endpoint.address)
        await client.subscribe(seen_by_client.append)
        try:
            sid = (await client.create_session("keyed"))["id"]
            await client.set_model(sid, "openai", "leak-model")
            echo = {"error": {"message": f"Incorrect API key provided: {key}", "code": key}}
            scripts = [
                lambda: server.stream([chunk("fine "), chunk("thanks", finish="stop")]),
                lambda: server.respond(401, orjson.dumps(echo)),
                lambda: server.respond(500, f"upstream said {key} is bad".encode(), "text/plain"),
                lambda: server.stream([echo]),  # an error inside the stream, echoing it
                lambda: server.stream([chunk(f"half {key[:6]}")], done=False, complete=False),
            ]
            for n, script in enumerate(scripts):
                script()
                outcomes.append(await client.prompt_and_wait(sid, f"turn {n}"))
            seen_by_client.append(await client.get_session(sid))
            seen_by_client.append(await client.events(sid))
            seen_by_client.append(await client.list_sessions())
        finally:
            await client.close()
        # the CLI on the same store goes through the host and prints what it is told
        show = ["sessions", "show", sid, "--store", str(store), "--json"]
        assert await asyncio.to_thread(cli.main, show) == 0
        prompt = ["sessions", "prompt", sid, "via cli", "--store", str(store)]
        assert await asyncio.to_thread(cli.main, prompt) == 1  # the cut stream again
    finally:
        await endpoint.close()
        await host.close()
    try:
        assert [o["status"] for o in outcomes] == ["completed"] + ["failed"] * 4
        assert "HTTP 401" in outcomes[1]["error"]
        assert "Check the API key" in outcomes[1]["error"]
        # the key was really used: every request carried it
        assert len(server.requests) == 8  # the SDK retried the 500 twice
        assert all(r.headers["authorization"] == f"Bearer {key}" for r in server.requests)

        files = {**everything_under(store), **everything_under(config)}
        assert any(name.endswith(".jsonl") for name in files)
        assert any(name.endswith("settings.json") for name in files)
        captured = capsys.readouterr()
        haystacks = {
            **files,
            "log": caplog.text.encode(),
            "log records": repr([(r.args, r.exc_info) for r in caplog.records]).encode(),
            "stdout": captured.out.encode(),
            "stderr": captured.err.encode(),
            "client": orjson.dumps(seen_by_client, default=str),
            "outcomes": orjson.dumps(outcomes, default=str),
        }
        leaked = [name for name, data in haystacks.items() if key.encode() in data]
        assert leaked == []
        assert b"***" in haystacks["outcomes"]  # the echoed key was scrubbed, not dropped
    finally:
        shutil.rmtree(store.parent, ignore_errors=True)
