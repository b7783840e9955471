"""The host's provider settings as the client hands them out (`settings()`), one typed
definition for every front end: the endpoint new sessions use and each vendor's state.
A key is never in them — only where it comes from. `host_settings` makes a complete typed
value of what arrived (a key missing takes its default), so Preferences read fields, not
`.get("…")` with fallbacks of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class VendorState(TypedDict):
    """One vendor (or the compatible endpoint) as the host reaches it."""

    #: where its key comes from: "env", "keyring", or None (no key)
    key: str | None
    #: the same in words ("from $ANTHROPIC_API_KEY", or why there is none)
    keyNote: str
    baseUrl: str
    #: the base URL was given (by Preferences or the SDK's variable), not the vendor's own
    explicitUrl: bool
    #: the default model of new sessions on it ("" : a fork keeps its session's)
    model: str
    configured: bool
    #: what Preferences saved as its base URL ("" : none saved)
    savedBaseUrl: str


class HostSettings(TypedDict):
    """`settings()`: the provider new sessions use and every vendor's state."""

    kind: str  # "offline" or "openai" (the compatible endpoint)
    base_url: str
    model: str
    reasoning_effort: str | None
    #: the compatible endpoint's key: its origin, and in words
    compatible: VendorState
    vendors: dict[str, VendorState]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def vendor_state(data: object) -> VendorState:
    got: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    key = got.get("key")
    return VendorState(
        key=key if key in ("env", "keyring") else None, keyNote=_text(got.get("keyNote")),
        baseUrl=_text(got.get("baseUrl")), explicitUrl=got.get("explicitUrl") is True,
        model=_text(got.get("model")), configured=got.get("configured") is True,
        savedBaseUrl=_text(got.get("savedBaseUrl")),
    )  # fmt: skip


def host_settings(data: Mapping[str, Any]) -> HostSettings:
    """`settings()`'s answer as sent, complete."""
    vendors = data.get("vendors")
    effort = data.get("reasoning_effort")
    kind = _text(data.get("kind")) or "offline"
    base_url, model = _text(data.get("base_url")), _text(data.get("model"))
    compatible = vendor_state({
        "key": data.get("keySource"), "keyNote": data.get("key"), "baseUrl": base_url,
        "explicitUrl": bool(base_url), "model": model, "configured": kind == "openai",
        "savedBaseUrl": base_url,
    })  # fmt: skip
    return HostSettings(
        kind=kind, base_url=base_url, model=model,
        reasoning_effort=effort if isinstance(effort, str) and effort else None,
        compatible=compatible,
        vendors={str(n): vendor_state(s) for n, s in vendors.items()}
        if isinstance(vendors, Mapping) else {},
    )  # fmt: skip
