"""Editing a vendor from Preferences: its base URL, default model and key, and the list of
models its endpoint offers.

The vendors are Anthropic, OpenAI and Gemini (`settings.VENDORS`) and the OpenAI-compatible
endpoint the provider settings name (`COMPATIBLE`). A key goes to the system keyring under
the endpoint's base URL — the one place keys are kept — and is never read back to the
person, only where it comes from. Everything here may wait on the keyring (a desktop unlock
prompt): call it off the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from forkwise.core.runtime.providers.sdk_provider import SdkProvider
from forkwise.core.runtime.settings import (
    VENDORS,
    ApiKeyLookup,
    SettingsError,
    VendorEndpoint,
    VendorSettings,
    build_vendor,
    delete_api_key,
    find_api_key,
    load_settings,
    load_vendor_settings,
    save_vendor_settings,
    store_api_key,
    vendor_endpoint,
)

#: the OpenAI-compatible endpoint of the provider settings, edited beside the vendors
COMPATIBLE: Final = "compatible"
EDITABLE: Final = (*VENDORS, COMPATIBLE)


def _check(name: str) -> None:
    if name not in EDITABLE:
        raise SettingsError(f"Unknown vendor {name!r}; expected one of {', '.join(EDITABLE)}.")


def endpoint_of(
    name: str, base_url: str = "", env: Mapping[str, str] | None = None
) -> VendorEndpoint:
    """The vendor as it would be reached with `base_url` (blank: the saved one); its key
    is the one for that URL (the vendor's variable, else the keyring's entry)."""
    _check(name)
    if name == COMPATIBLE:
        url = (base_url.strip() or load_settings().base_url).rstrip("/")
        if not url:
            raise SettingsError("No base URL is set for the OpenAI-compatible endpoint.")
        return VendorEndpoint(name, url, True, find_api_key(url, env), load_settings().model)
    saved = load_vendor_settings().get(name) or VendorSettings()
    wanted = VendorSettings(base_url.strip() or saved.base_url, saved.model)
    return vendor_endpoint(name, wanted, env)


def save_vendor(
    name: str,
    base_url: str,
    model: str,
    api_key: str = "",
    env: Mapping[str, str] | None = None,
) -> VendorEndpoint:
    """Record a vendor's base URL and default model in the settings file, and a key typed
    for it in the keyring (filed under the base URL it is for). Not for the compatible
    endpoint: the provider settings hold its URL and model."""
    if name not in VENDORS:
        raise SettingsError(f"Unknown vendor {name!r}; expected one of {', '.join(VENDORS)}.")
    settings = VendorSettings(base_url.strip().rstrip("/"), model.strip())
    save_vendor_settings(name, settings)
    endpoint = vendor_endpoint(name, settings, env)
    if api_key.strip():
        store_api_key(endpoint.base_url, api_key.strip())
        endpoint = vendor_endpoint(name, settings, env)
    return endpoint


def clear_key(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Forget the keyring's key of this vendor's current endpoint; False when there was
    none. A key in the vendor's environment variable is not Forkwise's to forget."""
    return delete_api_key(endpoint_of(name, "", env).base_url)


def listing_provider(
    name: str, base_url: str = "", api_key: str = "", env: Mapping[str, str] | None = None
) -> SdkProvider:
    """The provider whose SDK lists the models of `name` at `base_url` (blank: the saved
    one), with `api_key` when one was typed and not saved yet, else the stored one."""
    endpoint = endpoint_of(name, base_url, env)
    if api_key.strip():
        endpoint = replace(endpoint, lookup=ApiKeyLookup(api_key.strip(), "typed", ""))
    note = endpoint.lookup.note if endpoint.lookup.key is None else ""
    if name == COMPATIBLE:
        from forkwise.core.runtime.providers.openai import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            endpoint.base_url, endpoint.model, api_key=endpoint.lookup.key, key_note=note
        )
    provider = build_vendor(endpoint)
    assert isinstance(provider, SdkProvider)
    return provider
