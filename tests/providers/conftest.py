"""Fixtures for the provider tests: a fake endpoint on 127.0.0.1, no API key in the environment."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from fake_endpoint import Server


@pytest_asyncio.fixture
async def server() -> AsyncIterator[Server]:
    srv = Server()
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own keys, endpoints or keyring must never reach a test."""
    for name in (
        "FORKWISE_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("FORKWISE_CONFIG_DIR", raising=False)
    monkeypatch.setitem(sys.modules, "keyring", None)  # import keyring -> ImportError
