"""Preferences list each vendor's models with the vendor's own SDK (its list-models call)
against the configured endpoint — here a stand-in on 127.0.0.1 speaking the vendor's wire
format — with the key typed or stored; a failure reads as plain words without the key."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from fake_endpoint import Request, Server
from memory_keyring import MemoryKeyring, install
from vendor_streams import claude_error, claude_models, gemini_models, openai_models

from forkwise.core.client.client import Client
from forkwise.core.client.settings_values import host_settings
from forkwise.core.errors import ProviderError
from forkwise.core.host.host import Host
from forkwise.core.runtime import vendor_edit
from forkwise.core.runtime.settings import (
    CONFIG_ENV,
    KEYRING_SERVICE,
    ProviderSettings,
    load_vendor_settings,
    save_settings,
)

KEY = "sk-ant-listing-0123456789abcdef"


@pytest.fixture
def keyring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> MemoryKeyring:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "config"))
    return install(monkeypatch)


def sent_key(request: Request) -> str | None:
    """The key an Anthropic SDK sent (its header depends on the SDK's version)."""
    return request.headers.get("x-api-key") or request.headers.get("authorization", "")[7:]


def root(server: Server) -> str:
    return f"http://127.0.0.1:{server.port}"


@pytest.mark.asyncio
async def test_claude_models_are_listed_with_the_typed_key(
    server: Server, keyring: MemoryKeyring
) -> None:
    server.respond(200, claude_models("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"))
    provider = vendor_edit.listing_provider("anthropic", root(server), KEY)
    assert await provider.list_models() == ["claude-opus-4-1-20250805",
                                            "claude-sonnet-4-5-20250929"]
    (request,) = server.requests
    assert (request.method, request.path.split("?")[0]) == ("GET", "/v1/models")
    assert sent_key(request) == KEY


@pytest.mark.asyncio
async def test_a_saved_vendor_lists_with_its_keyring_key_and_the_key_never_reaches_the_file(
    server: Server, keyring: MemoryKeyring, tmp_path: Path
) -> None:
    endpoint = vendor_edit.save_vendor("openai", server.base_url, "gpt-5", KEY)
    assert keyring.entries == {(KEYRING_SERVICE, server.base_url): KEY}
    assert endpoint.lookup.source == "keyring"
    saved = (tmp_path / "config" / "settings.json").read_bytes()
    assert KEY.encode() not in saved
    assert orjson.loads(saved)["vendors"]["openai"] == {"base_url": server.base_url,
                                                        "model": "gpt-5"}
    server.respond(200, openai_models("gpt-5", "gpt-5-mini", "gpt-4.1"))
    assert await vendor_edit.listing_provider("openai").list_models() == [
        "gpt-4.1", "gpt-5", "gpt-5-mini"]
    (request,) = server.requests
    assert request.path == "/v1/models"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    # cleared: the keyring forgets it, the saved URL and model stay
    assert vendor_edit.clear_key("openai") is True
    assert keyring.entries == {}
    assert load_vendor_settings()["openai"].model == "gpt-5"
    assert vendor_edit.endpoint_of("openai").lookup.key is None


@pytest.mark.asyncio
async def test_gemini_lists_only_models_that_generate_content(
    server: Server, keyring: MemoryKeyring
) -> None:
    server.respond(200, gemini_models(
        ("gemini-2.5-pro", ["generateContent", "countTokens"]),
        ("gemini-2.5-flash", ["generateContent"]),
        ("text-embedding-004", ["embedContent"]),
    ))
    provider = vendor_edit.listing_provider("gemini", root(server), "gemini-key-0123456789")
    assert await provider.list_models() == ["gemini-2.5-flash", "gemini-2.5-pro"]
    (request,) = server.requests
    assert request.path.split("?")[0] in ("/v1/models", "/v1beta/models"), request.path
    assert request.headers["x-goog-api-key"] == "gemini-key-0123456789"


@pytest.mark.asyncio
async def test_the_compatible_endpoint_lists_without_a_key(
    server: Server, keyring: MemoryKeyring
) -> None:
    save_settings(ProviderSettings(kind="openai", base_url=server.base_url, model="llama3.1"))
    server.respond(200, openai_models("llama3.1", "qwen3"))
    assert await vendor_edit.listing_provider("compatible").list_models() == ["llama3.1", "qwen3"]
    assert "authorization" not in server.requests[0].headers


@pytest.mark.asyncio
async def test_a_refused_listing_says_so_in_plain_words_without_the_key(
    server: Server, keyring: MemoryKeyring
) -> None:
    server.respond(401, claude_error("authentication_error", f"invalid x-api-key {KEY}"))
    provider = vendor_edit.listing_provider("anthropic", root(server), KEY)
    with pytest.raises(ProviderError) as caught:
        await provider.list_models()
    message = caught.value.message
    assert "Anthropic" in message, message
    assert "key" in message.lower(), message
    assert KEY not in message
    assert KEY[:12] not in str(caught.value.details)


@pytest.mark.asyncio
async def test_an_unreachable_endpoint_is_a_plain_connection_error(
    keyring: MemoryKeyring,
) -> None:
    srv = Server()
    await srv.start()
    url = root(srv)
    await srv.close()  # nothing listens there now
    with pytest.raises(ProviderError) as caught:
        await vendor_edit.listing_provider("anthropic", url, KEY).list_models()
    assert url in caught.value.message or url in str(caught.value.details), caught.value


@pytest.mark.asyncio
async def test_the_host_saves_a_vendor_and_lists_its_models_over_rpc(
    server: Server, keyring: MemoryKeyring, tmp_path: Path
) -> None:
    host = Host.open(tmp_path / "store", default_cwd=str(tmp_path))
    client = await Client.in_process(host)
    try:
        state = await client.save_vendor(
            "anthropic", {"base_url": root(server), "model": "claude-sonnet-4-5"}, KEY)
        assert state["key"] == "keyring"
        assert state["configured"] is True
        assert state["savedBaseUrl"] == root(server)
        assert KEY not in orjson.dumps(state).decode()
        served = {m["provider"]: m for m in await client.models()}
        assert served["anthropic"]["default"] == "claude-sonnet-4-5"
        server.respond(200, claude_models("claude-sonnet-4-5"))
        assert await client.list_vendor_models("anthropic") == ["claude-sonnet-4-5"]
        assert sent_key(server.requests[0]) == KEY
        assert await client.clear_vendor_key("anthropic") is True
        seen = host_settings(await client.settings())
        assert seen["vendors"]["anthropic"]["key"] is None
        assert seen["vendors"]["anthropic"]["savedBaseUrl"] == root(server)
        assert seen["vendors"]["anthropic"]["model"] == "claude-sonnet-4-5"
        # the compatible endpoint: its key's origin comes as a field, not only in words
        await client.save_settings(
            {"kind": "openai", "base_url": server.base_url, "model": "llama3.1"}, KEY)
        compatible = host_settings(await client.settings())["compatible"]
        assert (compatible["key"], compatible["keyNote"]) == ("keyring", "from the system keyring")
        assert (compatible["baseUrl"], compatible["model"]) == (server.base_url, "llama3.1")
        assert compatible["configured"] is True
    finally:
        await client.close()
        await host.close()
