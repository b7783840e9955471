"""Provider settings: the file round trip, its privacy, and where the API key comes from."""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

import orjson
import pytest
from fake_endpoint import Server, chunk

from forkwise.core.errors import error_from_code
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider
from forkwise.core.runtime.providers.steps import StepResult
from forkwise.core.runtime.settings import (
    API_KEY_ENV,
    CONFIG_ENV,
    ProviderSettings,
    SettingsError,
    build_provider,
    delete_api_key,
    find_api_key,
    load_settings,
    save_settings,
    settings_path,
    store_api_key,
)

KEY = "sk-settings-9d2e-very-secret"
OPENAI = ProviderSettings(
    kind="openai", base_url="http://127.0.0.1:9/v1", model="m-1", reasoning_effort="medium"
)
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


class PasswordDeleteError(Exception):
    """Named like keyring's own, which the settings module recognises by name."""


class FakeKeyring(types.ModuleType):
    """Stands in for the `keyring` package (which may not be installed)."""

    def __init__(self, broken: str | None = None) -> None:
        super().__init__("keyring")
        self.entries: dict[tuple[str, str], str] = {}
        self.broken = broken

    def _check(self) -> None:
        if self.broken:
            raise RuntimeError(self.broken)

    def get_password(self, service: str, account: str) -> str | None:
        self._check()
        return self.entries.get((service, account))

    def set_password(self, service: str, account: str, secret: str) -> None:
        self._check()
        self.entries[(service, account)] = secret

    def delete_password(self, service: str, account: str) -> None:
        self._check()
        if self.entries.pop((service, account), None) is None:
            raise PasswordDeleteError("no such entry")


@pytest.fixture
def keyring(monkeypatch: pytest.MonkeyPatch) -> FakeKeyring:
    fake = FakeKeyring()
    monkeypatch.setitem(sys.modules, "keyring", fake)
    return fake


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert save_settings(OPENAI, path) == path
    assert load_settings(path) == OPENAI
    assert orjson.loads(path.read_bytes())["version"] == 1


def test_nothing_saved_means_the_offline_default(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "absent.json")
    assert settings == ProviderSettings()
    assert settings.kind == "offline"
    assert settings.choice().provider == "offline"


def test_config_dir_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "cfg"))
    assert settings_path() == tmp_path / "cfg" / "settings.json"
    save_settings(OPENAI)
    assert load_settings() == OPENAI


@posix_only
def test_file_is_private_and_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "new-dir" / "settings.json"
    save_settings(ProviderSettings(), path)
    save_settings(OPENAI, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no temp left


def test_the_key_never_reaches_the_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyring: FakeKeyring
) -> None:
    monkeypatch.setenv(API_KEY_ENV, KEY)
    store_api_key(OPENAI.base_url, KEY)
    path = tmp_path / "settings.json"
    save_settings(OPENAI, path)
    build_provider(load_settings(path))
    save_settings(load_settings(path), path)
    data = path.read_bytes()
    assert KEY.encode() not in data
    assert b"api_key" not in data
    assert b"sk-" not in data


def test_a_key_written_into_the_file_by_hand_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(orjson.dumps({"version": 1, "provider": {**OPENAI.to_dict(), "api_key": KEY}}))
    assert load_settings(path) == OPENAI
    prov = build_provider(load_settings(path))
    assert isinstance(prov, OpenAICompatibleProvider)
    assert KEY not in repr(prov)
    assert not prov.has_api_key


def test_other_sections_of_the_file_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(orjson.dumps({"version": 1, "window": {"width": 900}}))
    save_settings(OPENAI, path)
    assert orjson.loads(path.read_bytes())["window"] == {"width": 900}


def test_a_damaged_file_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"version": 1, "provider": {"kind": "openai", ')
    with pytest.raises(SettingsError, match="not valid JSON") as info:
        load_settings(path)
    assert info.value.code == "invalid-settings"
    assert path.read_bytes() == b'{"version": 1, "provider": {"kind": "openai", '
    save_settings(OPENAI, path)  # an explicit save sets the damaged file aside
    (aside,) = tmp_path.glob("settings.json.damaged-*")
    assert aside.read_bytes() == b'{"version": 1, "provider": {"kind": "openai", '
    assert load_settings(path) == OPENAI


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ({"kind": "anthropic-ish"}, "Unknown provider kind"),
        ({"kind": "openai", "timeout": 0}, "positive number"),
        ({"kind": "openai", "model": 7}, "must be a string"),
        ({"kind": "openai", "reasoning_effort": ""}, "reasoning effort"),
    ],
)
def test_bad_values_are_refused_with_the_file_named(
    tmp_path: Path, provider: dict[str, object], message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(orjson.dumps({"version": 1, "provider": provider}))
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(path)
    assert str(path) in info.value.message


def test_a_newer_file_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"version": 2, "provider": {}}')
    with pytest.raises(SettingsError, match="version 2"):
        load_settings(path)


def test_settings_error_crosses_the_wire_by_code() -> None:
    assert isinstance(error_from_code("invalid-settings", "x"), SettingsError)


def test_env_var_wins_over_the_keyring(keyring: FakeKeyring) -> None:
    store_api_key(OPENAI.base_url, "sk-from-keyring")
    lookup = find_api_key(OPENAI.base_url, {API_KEY_ENV: KEY})
    assert (lookup.key, lookup.source) == (KEY, "env")
    assert KEY not in repr(lookup)
    assert find_api_key(OPENAI.base_url, {}).key == "sk-from-keyring"


def test_keyring_entries_belong_to_one_endpoint(keyring: FakeKeyring) -> None:
    store_api_key("http://127.0.0.1:9/v1/", KEY)
    assert find_api_key("http://127.0.0.1:9/v1", {}).source == "keyring"
    assert find_api_key("https://elsewhere.example/v1", {}).key is None
    assert delete_api_key("http://127.0.0.1:9/v1") is True
    assert delete_api_key("http://127.0.0.1:9/v1") is False
    assert find_api_key("http://127.0.0.1:9/v1", {}).key is None


def test_keyring_not_installed_is_said_plainly() -> None:
    lookup = find_api_key(OPENAI.base_url, {})
    assert lookup.key is None
    assert "keyring unavailable" in lookup.note
    with pytest.raises(SettingsError, match="keyring unavailable"):
        store_api_key(OPENAI.base_url, KEY)


def test_keyring_without_a_working_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", FakeKeyring(broken="No recommended backend"))
    lookup = find_api_key(OPENAI.base_url, {})
    assert lookup.key is None
    assert lookup.note == "keyring unavailable: No recommended backend"
    with pytest.raises(SettingsError, match="keyring unavailable: No recommended backend"):
        store_api_key(OPENAI.base_url, KEY)


def test_offline_settings_build_the_offline_provider() -> None:
    from forkwise.core.runtime.providers.offline import OfflineProvider

    assert isinstance(build_provider(ProviderSettings()), OfflineProvider)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (ProviderSettings(kind="openai", model="m"), "No base URL"),
        (ProviderSettings(kind="openai", base_url="http://127.0.0.1:9/v1"), "No model"),
    ],
)
def test_incomplete_openai_settings_are_refused(settings: ProviderSettings, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        build_provider(settings)


def test_openai_choice_records_model_and_effort() -> None:
    assert OPENAI.choice() == ModelChoice("openai", "m-1", "medium")


@pytest.mark.asyncio
async def test_built_provider_sends_the_env_key_to_the_endpoint(
    server: Server, monkeypatch: pytest.MonkeyPatch, keyring: FakeKeyring
) -> None:
    settings = ProviderSettings(
        kind="openai", base_url=server.base_url, model="served", reasoning_effort="low"
    )
    store_api_key(server.base_url, "sk-from-keyring")
    monkeypatch.setenv(API_KEY_ENV, KEY)
    server.stream([chunk("hi", finish="stop")])
    prov = build_provider(settings)
    items = [
        i async for i in prov.stream_step([{"role": "user", "content": "x"}], settings.choice(), [])
    ]
    assert items[-1] == StepResult("hi")
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json()["model"] == "served"
    assert request.json()["reasoning_effort"] == "low"


# --- the vendors: Anthropic, OpenAI, Gemini ----------------------------------------------


def test_vendors_are_configured_by_their_sdks_variables(tmp_path: Path) -> None:
    from forkwise.core.runtime.settings import build_providers

    nothing = build_providers(ProviderSettings(), env={})
    assert set(nothing) == {"offline"}
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-xyz-0123456789",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # a keyless stand-in is configured too
        "GEMINI_API_KEY": "AIza-0123456789",
    }
    built = build_providers(ProviderSettings(), env=env)
    assert set(built) == {"offline", "anthropic", "openai", "gemini"}
    assert built["openai"].base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    assert built["openai"].api == "responses"  # type: ignore[attr-defined]
    assert "0123456789" not in repr(built) + repr(list(built.values()))
    # an OpenAI-compatible endpoint chosen in the settings stays the `openai` provider
    chosen = build_providers(OPENAI, env=env)
    assert chosen["openai"].base_url == OPENAI.base_url  # type: ignore[attr-defined]
    assert chosen["openai"].api == "chat"  # type: ignore[attr-defined]


def test_a_vendor_saved_in_preferences_takes_its_key_from_the_keyring_only_then(
    tmp_path: Path, keyring: FakeKeyring
) -> None:
    from forkwise.core.runtime.settings import (
        VendorSettings,
        build_providers,
        load_vendor_settings,
        save_vendor_settings,
        vendor_endpoint,
    )

    path = tmp_path / "settings.json"
    store_api_key("https://api.anthropic.com", "sk-ant-from-keyring-42")
    # not configured in Preferences: the keyring is not asked
    assert vendor_endpoint("anthropic", None, {}).lookup.key is None
    save_vendor_settings("anthropic", VendorSettings(model="claude-sonnet-4-5"), path)
    saved = load_vendor_settings(path)
    assert set(saved) == {"anthropic"}
    found = vendor_endpoint("anthropic", saved["anthropic"], {})
    assert (found.lookup.key, found.lookup.source) == ("sk-ant-from-keyring-42", "keyring")
    built = build_providers(ProviderSettings(), env={}, vendors=saved)
    assert built["anthropic"].models()[0]["default"] == "claude-sonnet-4-5"  # type: ignore[attr-defined]
    # the SDK's variable wins; nothing secret is in the file
    assert vendor_endpoint("anthropic", saved["anthropic"], {"ANTHROPIC_API_KEY": "sk-env"}).lookup.source == "env"
    text = path.read_text()
    assert "sk-ant-from-keyring-42" not in text
    assert orjson.loads(text)["vendors"]["anthropic"] == {"base_url": "", "model": "claude-sonnet-4-5"}
    # the provider section written before is kept
    save_settings(OPENAI, path)
    assert load_vendor_settings(path)["anthropic"].model == "claude-sonnet-4-5"
    assert load_settings(path) == OPENAI


def test_the_openai_sdk_key_goes_to_openai_only() -> None:
    env = {"OPENAI_API_KEY": "sk-openai-only"}
    local = build_provider(ProviderSettings("openai", "http://127.0.0.1:9/v1", "m"), env)
    assert not local.has_api_key  # type: ignore[attr-defined]
    hosted = build_provider(ProviderSettings("openai", "https://api.openai.com/v1", "gpt-5"), env)
    assert hosted.has_api_key  # type: ignore[attr-defined]


def test_a_model_picks_the_provider_of_its_vendor() -> None:
    from forkwise.core.runtime.providers.vendors import routed, vendor_of

    assert vendor_of("anthropic", "claude-opus-4-1") == "anthropic"
    assert vendor_of("openai", "gpt-5-codex") == "openai"
    assert vendor_of("google", "gemini-2.5-pro") == "gemini"
    assert vendor_of("openrouter", "anthropic/claude-sonnet-4-5") == "anthropic"
    assert vendor_of("offline", "forkwise-offline") is None
    assert routed(ModelChoice("openrouter", "anthropic/claude-sonnet-4-5")) == ModelChoice(
        "anthropic", "claude-sonnet-4-5"
    )
    same = ModelChoice("openai", "llama3", "low")  # a local endpoint's model stays there
    assert routed(same) is same
