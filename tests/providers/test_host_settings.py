"""The host serves the provider a person configured: saved settings reach new sessions,
a reload picks up a change, and broken settings leave the host serving offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_endpoint import Server, chunk

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.runtime.settings import API_KEY_ENV, CONFIG_ENV, ProviderSettings, save_settings

KEY = "sk-host-settings-51f0"


@pytest.mark.asyncio
async def test_saved_endpoint_answers_new_sessions_after_a_reload(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "config"))
    monkeypatch.setenv(API_KEY_ENV, KEY)
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    client = await Client.in_process(host)
    try:
        assert await host.apply_saved_settings() == ""  # no file yet: offline
        before = await client.create_session(title="before")
        assert before["provider"] == "offline"

        save_settings(ProviderSettings(kind="openai", base_url=server.base_url, model="m-7"))
        assert await client.reload_settings() == {
            "provider": "openai", "model": "m-7", "reasoning": None
        }
        after = await client.create_session(title="after")
        assert (after["provider"], after["model"]) == ("openai", "m-7")
        server.stream([chunk("Hello "), chunk("from the endpoint", finish="stop")])
        outcome = await client.prompt_and_wait(after["id"], "hi")
        assert outcome["status"] == "completed"
        assert outcome["reply"] == "Hello from the endpoint"
        (request,) = server.requests
        assert request.json()["model"] == "m-7"
        assert request.headers["authorization"] == f"Bearer {KEY}"
        # the session made before keeps the model its log selected
        kept = await client.prompt_and_wait(before["id"], "still offline?")
        assert kept["status"] == "completed"
        assert len(server.requests) == 1
    finally:
        await client.close()
        await host.close()


@pytest.mark.asyncio
async def test_broken_settings_leave_the_host_serving_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text('{"version": 1, "provider": {"kind": "openai"}}')
    monkeypatch.setenv(CONFIG_ENV, str(config))
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    client = await Client.in_process(host)
    try:
        problem = await host.apply_saved_settings()
        assert "offline model" in problem
        session = await client.create_session()
        outcome = await client.prompt_and_wait(session["id"], "hello")
        assert outcome["status"] == "completed"
    finally:
        await client.close()
        await host.close()
