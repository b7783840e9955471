"""The client's settings verbs: the host's provider settings, each vendor's endpoint,
key and models, and the workspaces. A part of `Client` (a base class of it); keys go to
the host's keyring and never come back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forkwise.core.client.api import Json


class SettingsVerbs:
    """Provider settings, vendors, models and workspaces."""

    if TYPE_CHECKING:  # what Client gives its parts (its wire, `forkwise.core.client.wire`)
        catalogue: dict[str, Json]

        async def call(self, method: str, params: Json | None = None) -> Any: ...

    async def settings(self) -> Json:
        """The host's provider settings: `{"kind", "base_url", "model", "reasoning_effort"}`
        and, for an endpoint, `"key"`: where its API key comes from (never the key);
        `"vendors"`: per vendor {"key", "keyNote", "baseUrl", "model", "configured"}."""
        result: Json = await self.call("settings.get")
        return result

    async def save_settings(self, values: Json, api_key: str = "") -> Json:
        """Save provider settings on the host (its settings file, the key in its keyring)
        and apply them; returns the new default `{"provider", "model", "reasoning"}`."""
        result: Json = await self.call("settings.save", {"values": values, "apiKey": api_key})
        return result

    async def save_vendor(self, vendor: str, values: Json, api_key: str = "") -> Json:
        """Save a vendor's `{"base_url", "model"}` (and a typed key, to the host's keyring)
        and apply them; returns the vendor's new state (never the key)."""
        result: Json = await self.call(
            "settings.saveVendor", {"vendor": vendor, "values": values, "apiKey": api_key}
        )
        return result

    async def clear_vendor_key(self, vendor: str) -> bool:
        """Forget the key the host's keyring holds for the vendor's endpoint."""
        return bool(await self.call("settings.clearKey", {"vendor": vendor}))

    async def list_vendor_models(
        self, vendor: str, base_url: str = "", api_key: str = ""
    ) -> list[str]:
        """The models the vendor's endpoint offers (its SDK's list-models call, made by
        the host), at `base_url` with `api_key` when given, else the saved ones."""
        params = {"vendor": vendor, "baseUrl": base_url, "apiKey": api_key}
        result: list[str] = await self.call("settings.listModels", params)
        return result

    async def reload_settings(self) -> Json:
        """Ask the host to read the provider settings again; returns the new default
        `{"provider", "model", "reasoning"}` for sessions created from now on."""
        result: Json = await self.call("host.reloadSettings")
        return result

    async def models(self) -> list[Json]:
        result: list[Json] = await self.call("model.list")
        return result

    async def workspaces(self) -> list[Json]:
        result: list[Json] = await self.call("workspace.list")
        return result

    async def attach(self, workspace: str, session_id: str) -> None:
        await self.call("workspace.attach", {"workspace": workspace, "sessionId": session_id})
