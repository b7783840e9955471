"""Provider settings: which model endpoint new turns use, and where its API key comes from.

The settings file (`settings.json` in the user config dir, or $FORKWISE_CONFIG_DIR) holds
the provider kind, base URL, model, reasoning effort and timeout — never the API key. The
key comes from $FORKWISE_API_KEY, else from the OS keyring (the optional `keyring`
package), filed under the endpoint's base URL so a key saved for one endpoint is never
sent to another. The file is private (0600) and replaced atomically; a damaged file is
reported, never silently rewritten.
"""

from __future__ import annotations

import importlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final

import orjson
import platformdirs

from forkwise.core.errors import ForkwiseError
from forkwise.core.runtime.providers.base import ModelChoice, Provider
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import write_file_atomically

CONFIG_ENV: Final = "FORKWISE_CONFIG_DIR"
API_KEY_ENV: Final = "FORKWISE_API_KEY"
KEYRING_SERVICE: Final = "forkwise"
SETTINGS_FILE: Final = "settings.json"
SETTINGS_VERSION: Final = 1
FILE_MODE: Final = 0o600
DIR_MODE: Final = 0o700
KINDS: Final = ("offline", "openai")


class SettingsError(ForkwiseError):
    """The settings file cannot be read or written, or the settings cannot be used."""

    code = "invalid-settings"


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """What the settings file records about the provider (deliberately no API key)."""

    kind: str = "offline"
    base_url: str = ""
    model: str = ""
    reasoning_effort: str | None = None
    timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SettingsError(
                f"Unknown provider kind {self.kind!r}; expected one of {', '.join(KINDS)}.",
                kind=self.kind,
            )
        for name in ("base_url", "model"):
            if not isinstance(getattr(self, name), str):
                raise SettingsError(f"The provider setting {name!r} must be a string.")
        if self.reasoning_effort is not None and (
            not isinstance(self.reasoning_effort, str) or not self.reasoning_effort.strip()
        ):
            raise SettingsError("The reasoning effort must be a non-empty string or unset.")
        timeout: object = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise SettingsError("The provider timeout must be a positive number of seconds.")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProviderSettings:
        """Known fields only: anything else in the file (an `api_key` included) is ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def choice(self) -> ModelChoice:
        """The `model/select` choice these settings make for new sessions."""
        if self.kind == "offline":
            from forkwise.core.runtime.providers.offline import default_choice

            return default_choice()
        return ModelChoice("openai", self.model, self.reasoning_effort)


def config_dir() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir("forkwise", appauthor=False))


def settings_path(directory: str | os.PathLike[str] | None = None) -> Path:
    return (Path(directory) if directory is not None else config_dir()) / SETTINGS_FILE


def load_settings(path: str | os.PathLike[str] | None = None) -> ProviderSettings:
    """The saved provider settings; the defaults (offline) when nothing was saved yet."""
    target = Path(path) if path is not None else settings_path()
    document = _read_document(target)
    if document is None:
        return ProviderSettings()
    provider = document.get("provider", {})
    if not isinstance(provider, Mapping):
        raise SettingsError(f"{target}: 'provider' must be a JSON object.", path=str(target))
    try:
        return ProviderSettings.from_dict(provider)
    except SettingsError as exc:
        raise SettingsError(f"{target}: {exc.message}", path=str(target)) from exc


def save_settings(settings: ProviderSettings, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the settings atomically (temp file, fsync, replace) with mode 0600.

    Other top-level sections of the file are kept. A damaged existing file is first set
    aside next to it (`settings.json.damaged-XXXX`), so nothing a person wrote is lost.
    """
    target = Path(path) if path is not None else settings_path()
    try:
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"Cannot create {target.parent}: {exc}", path=str(target)) from exc
    try:
        document = dict(_read_document(target) or {})
    except SettingsError:
        aside = target.with_name(f"{target.name}.damaged-{secrets.token_hex(4)}")
        try:
            os.replace(target, aside)
        except OSError as exc:
            raise SettingsError(f"Cannot set aside {target}: {exc}", path=str(target)) from exc
        document = {}
    document["version"] = SETTINGS_VERSION
    document["provider"] = settings.to_dict()
    _write_private(target, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return target


def _read_document(target: Path) -> dict[str, Any] | None:
    try:
        raw = read_regular(target, 1 << 20, follow=True)[0]  # never a FIFO's wait
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"Cannot read {target}: {exc}", path=str(target)) from exc
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise SettingsError(f"{target} is not valid JSON: {exc}", path=str(target)) from exc
    if not isinstance(document, dict):
        raise SettingsError(f"{target} must hold a JSON object.", path=str(target))
    version = document.get("version", SETTINGS_VERSION)
    if version != SETTINGS_VERSION:
        raise SettingsError(
            f"{target} has settings version {version!r}; this Forkwise reads version "
            f"{SETTINGS_VERSION}.",
            path=str(target),
        )
    return document


def _write_private(target: Path, data: bytes) -> None:
    try:
        write_file_atomically(target, data, mode=FILE_MODE)
    except OSError as exc:
        raise SettingsError(f"Cannot write {target}: {exc}", path=str(target)) from exc


# --- the API key ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiKeyLookup:
    """Where the key came from (`env`, `keyring` or None) and, if none, why."""

    key: str | None = field(default=None, repr=False)
    source: str | None = None
    note: str = ""


def find_api_key(base_url: str, env: Mapping[str, str] | None = None) -> ApiKeyLookup:
    """$FORKWISE_API_KEY wins; else the keyring entry for this base URL.

    The keyring may block (a desktop unlock prompt): call this off the GUI thread.
    """
    environ = os.environ if env is None else env
    from_env = environ.get(API_KEY_ENV, "").strip()
    if from_env:
        return ApiKeyLookup(from_env, "env", f"from ${API_KEY_ENV}")
    return _keyring_key(base_url, f"set ${API_KEY_ENV} or save one in the keyring")


def store_api_key(base_url: str, key: str) -> None:
    """Save the key for this endpoint in the OS keyring (the only place it is persisted)."""
    if not key:
        raise SettingsError("The API key is empty.")
    backend, problem = _keyring()
    if backend is None:
        raise SettingsError(f"Cannot save the API key: {problem}.")
    try:
        backend.set_password(KEYRING_SERVICE, _account(base_url), key)
    except Exception as exc:  # see find_api_key
        raise SettingsError(f"Cannot save the API key: keyring unavailable: {exc}.") from exc


def delete_api_key(base_url: str) -> bool:
    """Forget the keyring entry for this endpoint; False when there was none."""
    backend, problem = _keyring()
    if backend is None:
        raise SettingsError(f"Cannot remove the API key: {problem}.")
    try:
        backend.delete_password(KEYRING_SERVICE, _account(base_url))
    except Exception as exc:  # keyring raises PasswordDeleteError when there is no entry
        if type(exc).__name__ == "PasswordDeleteError":
            return False
        raise SettingsError(f"Cannot remove the API key: keyring unavailable: {exc}.") from exc
    return True


def _keyring() -> tuple[Any, str]:
    """The `keyring` module, or None and the reason it cannot be used."""
    try:
        module = importlib.import_module("keyring")
    except ImportError:
        return None, "keyring unavailable: the 'keyring' package is not installed"
    return module, ""


def _account(base_url: str) -> str:
    return base_url.strip().rstrip("/")


# --- the vendors: Anthropic, OpenAI, Gemini ----------------------------------------


@dataclass(frozen=True, slots=True)
class Vendor:
    """How a vendor's SDK finds its endpoint and key in the environment."""

    name: str
    key_envs: tuple[str, ...]
    base_url_env: str
    default_base_url: str


VENDORS: Final = {
    "anthropic": Vendor(
        "anthropic", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "https://api.anthropic.com"
    ),
    "openai": Vendor(
        "openai", ("OPENAI_API_KEY",), "OPENAI_BASE_URL", "https://api.openai.com/v1"
    ),
    "gemini": Vendor(
        "gemini",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "GOOGLE_GEMINI_BASE_URL",
        "https://generativelanguage.googleapis.com",
    ),
}


@dataclass(frozen=True, slots=True)
class VendorSettings:
    """What the settings file records about one vendor (`vendors.<name>`; never a key):
    its base URL when not the vendor's own (a proxy, a stand-in) and the model new
    sessions on it start with."""

    base_url: str = ""
    model: str = ""

    def __post_init__(self) -> None:
        for name in ("base_url", "model"):
            if not isinstance(getattr(self, name), str):
                raise SettingsError(f"The vendor setting {name!r} must be a string.")

    def to_dict(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model}


def load_vendor_settings(
    path: str | os.PathLike[str] | None = None,
) -> dict[str, VendorSettings]:
    """The saved settings of the vendors Preferences configured (the others have none:
    only their SDK's variables can configure them)."""
    target = Path(path) if path is not None else settings_path()
    document = _read_document(target) or {}
    saved = document.get("vendors", {})
    if not isinstance(saved, Mapping):
        raise SettingsError(f"{target}: 'vendors' must be a JSON object.", path=str(target))
    out: dict[str, VendorSettings] = {}
    for name in VENDORS:
        if name not in saved:
            continue
        values = saved[name]
        if not isinstance(values, Mapping):
            raise SettingsError(f"{target}: 'vendors.{name}' must be a JSON object.")
        known = {k: v for k, v in values.items() if k in ("base_url", "model")}
        out[name] = VendorSettings(**known)
    return out


def save_vendor_settings(
    name: str, vendor: VendorSettings, path: str | os.PathLike[str] | None = None
) -> Path:
    """Record one vendor's settings (atomically, 0600), keeping the rest of the file."""
    if name not in VENDORS:
        raise SettingsError(f"Unknown vendor {name!r}; expected one of {', '.join(VENDORS)}.")
    target = Path(path) if path is not None else settings_path()
    document = dict(_read_document(target) or {})  # a damaged file is reported, not lost
    document["version"] = SETTINGS_VERSION
    vendors = dict(document.get("vendors") or {})
    vendors[name] = vendor.to_dict()
    document["vendors"] = vendors
    try:
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"Cannot create {target.parent}: {exc}", path=str(target)) from exc
    _write_private(target, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return target


@dataclass(frozen=True, slots=True)
class VendorEndpoint:
    """Where a vendor is reached and with which key: `configured` when a key was found
    or a base URL was given (a local stand-in or proxy may need no key)."""

    name: str
    base_url: str
    explicit_url: bool
    lookup: ApiKeyLookup
    model: str = ""

    @property
    def configured(self) -> bool:
        return self.lookup.key is not None or self.explicit_url


def vendor_endpoint(
    name: str, saved: VendorSettings | None = None, env: Mapping[str, str] | None = None
) -> VendorEndpoint:
    """The vendor's base URL (the settings, else its SDK's variable, else its own) and
    its key (its SDK's variable, else the keyring entry for that base URL). The keyring is
    asked only for a vendor Preferences configured (`saved`): it may block on a desktop
    prompt, and a command that runs no model should not wake it."""
    vendor = VENDORS[name]
    environ = os.environ if env is None else env
    configured = saved is not None
    saved = saved or VendorSettings()
    url = saved.base_url.strip() or environ.get(vendor.base_url_env, "").strip()
    base_url = (url or vendor.default_base_url).rstrip("/")
    for key_env in vendor.key_envs:
        key = environ.get(key_env, "").strip()
        if key:
            return VendorEndpoint(
                name, base_url, bool(url), ApiKeyLookup(key, "env", f"from ${key_env}"),
                saved.model,
            )
    hint = f"set ${vendor.key_envs[0]} or save one in Preferences"
    if not configured:
        none = ApiKeyLookup(None, None, f"no API key ({hint})")
        return VendorEndpoint(name, base_url, bool(url), none)
    lookup = _keyring_key(base_url, hint)
    return VendorEndpoint(name, base_url, bool(url), lookup, saved.model)


def _keyring_key(base_url: str, hint: str) -> ApiKeyLookup:
    """The keyring's entry for this base URL; `hint` says how to give one when none."""
    backend, problem = _keyring()
    if backend is None:
        return ApiKeyLookup(None, None, problem)
    try:
        stored = backend.get_password(KEYRING_SERVICE, _account(base_url))
    except Exception as exc:  # backends raise their own types (locked, no D-Bus, …)
        return ApiKeyLookup(None, None, f"keyring unavailable: {exc}")
    if isinstance(stored, str) and stored:
        return ApiKeyLookup(stored, "keyring", "from the system keyring")
    return ApiKeyLookup(None, None, f"no API key ({hint})")


# --- building the providers ----------------------------------------------------------


def build_provider(settings: ProviderSettings, env: Mapping[str, str] | None = None) -> Provider:
    """The Provider these settings describe (the key looked up now, never stored)."""
    if settings.kind == "offline":
        from forkwise.core.runtime.providers.offline import OfflineProvider

        return OfflineProvider()
    if not settings.base_url.strip():
        raise SettingsError("No base URL is set for the OpenAI-compatible provider.")
    if not settings.model.strip():
        raise SettingsError("No model is set for the OpenAI-compatible provider.")
    from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider

    lookup = find_api_key(settings.base_url, env)
    if lookup.key is None and _account(settings.base_url) == VENDORS["openai"].default_base_url:
        # OpenAI's own endpoint: its SDK's variable is the key for it (and for no other)
        found = vendor_endpoint("openai", None, env).lookup
        lookup = found if found.key is not None else lookup
    return OpenAICompatibleProvider(
        settings.base_url,
        settings.model,
        api_key=lookup.key,
        reasoning_effort=settings.reasoning_effort,
        timeout=settings.timeout,
        key_note=lookup.note if lookup.key is None else "",
    )


def build_vendor(endpoint: VendorEndpoint, timeout: float = 600.0) -> Provider:
    """The provider of one configured vendor."""
    note = endpoint.lookup.note if endpoint.lookup.key is None else ""
    if endpoint.name == "anthropic":
        from forkwise.core.runtime.providers.claude import ClaudeProvider

        return ClaudeProvider(
            api_key=endpoint.lookup.key,
            base_url=endpoint.base_url,
            model=endpoint.model,
            timeout=timeout,
            key_note=note,
        )
    if endpoint.name == "openai":
        from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            endpoint.base_url,
            endpoint.model,
            api_key=endpoint.lookup.key,
            key_note=note,
            key_env="OPENAI_API_KEY",
            api="responses",
            timeout=timeout,
            vendor="OpenAI",
        )
    from forkwise.core.runtime.providers.gemini import GeminiProvider

    return GeminiProvider(
        api_key=endpoint.lookup.key,
        base_url=endpoint.base_url,
        model=endpoint.model,
        timeout=timeout,
        key_note=note,
    )


def build_providers(
    settings: ProviderSettings,
    env: Mapping[str, str] | None = None,
    vendors: Mapping[str, VendorSettings] | None = None,
) -> dict[str, Provider]:
    """Every provider this machine can serve: the offline one, the one the settings
    choose for new sessions, and each vendor whose key or base URL is configured (an
    OpenAI-compatible endpoint chosen in the settings is the `openai` provider)."""
    from forkwise.core.runtime.providers.offline import OfflineProvider

    out: dict[str, Provider] = {"offline": OfflineProvider()}
    chosen = build_provider(settings, env)
    out[chosen.name] = chosen
    saved = dict(vendors) if vendors is not None else {}
    for name in VENDORS:
        if name in out:
            continue
        endpoint = vendor_endpoint(name, saved.get(name), env)
        if endpoint.configured:
            out[name] = build_vendor(endpoint)
    return out
