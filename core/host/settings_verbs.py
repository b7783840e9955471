"""The host's provider-settings verbs: `settings.get`, `settings.save`,
`host.reloadSettings`, the models it serves. A part of Host (a base class of it)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from forkwise.core.errors import ForkwiseError
from forkwise.core.runtime.providers.base import ModelChoice, Provider

if TYPE_CHECKING:
    from forkwise.core.runtime.settings import ProviderSettings

Json = dict[str, Any]


class SettingsVerbs:
    """Settings are read and written on this host's machine (its settings file and OS
    keyring), and apply at once to the sessions created from then on."""

    if TYPE_CHECKING:  # what Host gives its parts
        providers: dict[str, Provider]
        _default_model: ModelChoice

        def _check_writable(self) -> None: ...

    def use_settings(self, settings: ProviderSettings) -> Json:
        """Serve the provider these settings describe; sessions created from now on start
        on its model (a session keeps the model its log selects). May block on the OS
        keyring: call it off the event loop."""
        from forkwise.core.runtime.settings import build_providers, load_vendor_settings

        # the chosen provider, and each vendor whose key or base URL is configured
        self.providers.update(build_providers(settings, vendors=load_vendor_settings()))
        self._default_model = settings.choice()
        choice = self._default_model
        return {"provider": choice.provider, "model": choice.model, "reasoning": choice.reasoning}

    async def settings(self) -> Json:
        """`settings.get`: the saved provider settings, without the key."""
        from forkwise.core.runtime.settings import find_api_key, load_settings

        settings = await asyncio.to_thread(load_settings)
        values = settings.to_dict()
        if settings.kind == "openai":
            found = await asyncio.to_thread(find_api_key, settings.base_url)
            values["key"] = found.note  # where the key comes from, never the key
            values["keySource"] = found.source  # "env", "keyring" or None
        values["vendors"] = await asyncio.to_thread(self._vendor_states)
        return values

    def _vendor_states(self) -> dict[str, Json]:
        """Each vendor as this host reaches it: where its key comes from ("env",
        "keyring" or None, and in words; never the key), its base URL, its default model."""
        from forkwise.core.runtime.settings import (
            VENDORS,
            VendorSettings,
            load_vendor_settings,
            vendor_endpoint,
        )

        try:
            saved = load_vendor_settings()
        except ForkwiseError:
            saved = {}
        out: dict[str, Json] = {}
        for name in VENDORS:
            found = vendor_endpoint(name, saved.get(name))
            out[name] = {
                "key": found.lookup.source, "keyNote": found.lookup.note,
                "baseUrl": found.base_url, "explicitUrl": found.explicit_url,
                "model": found.model, "configured": found.configured,
                # what Preferences saved (blank: the SDK's variable or the vendor's own)
                "savedBaseUrl": (saved.get(name) or VendorSettings()).base_url,
            }
        return out

    async def save_vendor(
        self, name: str, values: Mapping[str, Any], api_key: str = "", *, remote: bool = False
    ) -> Json:
        """`settings.saveVendor`: a vendor's base URL, default model and (when one was
        typed) key, applied at once; returns the vendor's new state (never the key). A
        `remote` client does not move the endpoint of a vendor with a key."""
        self._check_writable()
        from forkwise.core.runtime import vendor_edit

        base_url, model = str(values.get("base_url") or ""), str(values.get("model") or "")

        def save() -> None:
            if remote:
                self._confine(name, base_url, "")
            vendor_edit.save_vendor(name, base_url, model, api_key)

        await asyncio.to_thread(save)
        await self.reload_settings()
        return (await asyncio.to_thread(self._vendor_states))[name]

    async def clear_vendor_key(self, name: str) -> bool:
        """`settings.clearKey`: forget the keyring's key of a vendor's endpoint (or the
        compatible endpoint's); False when the keyring held none."""
        self._check_writable()
        from forkwise.core.runtime import vendor_edit

        cleared = await asyncio.to_thread(vendor_edit.clear_key, name)
        await self.reload_settings()
        return cleared

    async def list_vendor_models(
        self, name: str, base_url: str = "", api_key: str = "", *, remote: bool = False
    ) -> list[str]:
        """`settings.listModels`: the models the vendor's endpoint offers, from its SDK's
        list-models call (at `base_url` and with `api_key` when given, else the saved
        ones). A failure is a ProviderError in plain words, the key redacted."""
        from forkwise.core.runtime import vendor_edit

        def build() -> Any:
            if remote:
                self._confine(name, base_url, api_key)
            return vendor_edit.listing_provider(name, base_url, api_key)

        provider = await asyncio.to_thread(build)
        listed: list[str] = await provider.list_models()
        return listed

    @staticmethod
    def _confine(name: str, base_url: str, api_key: str) -> None:
        """A remote client may not send a stored key to an endpoint of its choosing."""
        from forkwise.core.host.confinement import check_endpoint
        from forkwise.core.runtime import vendor_edit

        if api_key.strip() or not base_url.strip():
            return
        current = vendor_edit.endpoint_of(name)
        check_endpoint(
            {"base_url": current.base_url}, {"base_url": base_url}, current.lookup.key is not None
        )

    async def save_settings(
        self, values: Mapping[str, Any], api_key: str = "", *, remote: bool = False
    ) -> Json:
        """`settings.save`: this host owns its settings file and keyring; the new settings
        apply at once (sessions created from now on start on their model). A `remote`
        client (confinement.py) does not move the endpoint of a provider with a key."""
        self._check_writable()
        from forkwise.core.runtime.settings import (
            ProviderSettings,
            find_api_key,
            load_settings,
            save_settings,
            store_api_key,
        )

        settings = ProviderSettings.from_dict(dict(values))

        def save() -> None:
            if remote:
                from forkwise.core.host.confinement import check_endpoint

                current = load_settings()
                keyed = find_api_key(current.base_url).key is not None
                check_endpoint(current.to_dict(), settings.to_dict(), keyed)
            save_settings(settings)
            if api_key and settings.kind == "openai":
                store_api_key(settings.base_url, api_key)

        await asyncio.to_thread(save)
        return await self.reload_settings()

    async def reload_settings(self) -> Json:
        """`host.reloadSettings`: read the settings file again (after Preferences saved it)."""
        from forkwise.core.runtime.settings import load_settings

        settings = await asyncio.to_thread(load_settings)
        return await asyncio.to_thread(self.use_settings, settings)

    async def apply_saved_settings(self) -> str:
        """Apply the saved provider settings at start-up; returns a warning for the person
        ("" when all is well). Broken settings must not keep the host from serving."""
        try:
            await self.reload_settings()
        except ForkwiseError as exc:
            return (
                f"the saved provider settings were not used ({exc.message}); "
                "new sessions use the offline model"
            )
        return ""

    def models(self) -> list[Json]:
        out: list[Json] = []
        for name, provider in self.providers.items():
            listed = getattr(provider, "models", None)
            out.extend(listed() if callable(listed) else [{"provider": name, "model": None}])
        return out
