"""A vendor SDK's failure in plain words, the same sentences for every vendor.

The SDKs retry what is worth retrying (429, 5xx, overloaded, a dropped connection) before
they raise; what reaches here is final. The sentence says what happened and what a
person can do; the vendor's own words follow. The result is a `ProviderError` that still
has to leave through `redact.scrubbed` (the provider's `stream_step` does that).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forkwise.core.errors import ProviderError


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def status_error(
    vendor: str,
    status: int,
    said: str,
    *,
    key_env: str,
    has_key: bool,
    key_note: str = "",
    kind: str = "",
    retries: int = 0,
    base_url: str = "",
) -> ProviderError:
    """The error for an HTTP status (or an error event inside the stream: `kind`)."""
    tried = f" (tried {retries + 1} times)" if retries else ""
    head = _cap(vendor)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        if has_key:
            what = (
                f"{head} refused the API key (HTTP {status}). Check the API key (${key_env} "
                "or the one saved in Preferences)."
            )
        else:
            note = f" ({key_note})" if key_note else ""
            what = (
                f"{head} needs an API key (HTTP {status}). No API key was sent{note}; set "
                f"${key_env} or save one in Preferences."
            )
    elif status == 429 or kind == "rate_limit_error":
        what = (
            f"{head} is limiting requests (HTTP 429: rate limit or quota){tried}. Wait a "
            "moment and send again."
        )
    elif status == 529 or kind == "overloaded_error":
        what = f"{head} is overloaded right now (HTTP {status}){tried}. Try again in a few minutes."
    elif status == 404 or kind == "not_found_error":
        where = f" ({base_url})" if base_url else ""
        what = (
            f"{head} does not know this model or address (HTTP 404). Check the model "
            f"name and the base URL{where}."
        )
    elif status >= 500 or kind == "api_error":
        what = f"{head} had a server error (HTTP {status}){tried}. Try again later."
    elif status == 400 or kind == "invalid_request_error":
        what = f"{head} refused the request (HTTP {status})."
    else:
        what = f"{head} answered HTTP {status}."
    return ProviderError(
        f"{what} It said: {said or 'no details'}",
        reason="http-status",
        status=status,
        kind=kind or None,
    )


def error_text(body: object, fallback: str) -> tuple[str, str]:
    """(the vendor's message, its error type) from an error body in the shapes servers use
    ({"error": {"message", "type"}}, {"error": "…"}, {"message"}, {"detail"}, plain text)."""
    if isinstance(body, str) and body.strip():
        return body.strip(), ""
    if not isinstance(body, Mapping):
        return fallback, ""
    inner = body.get("error", body)
    if isinstance(inner, Mapping):
        message = inner.get("message")
        kind = inner.get("type") or inner.get("status") or inner.get("code") or ""
        if isinstance(message, str) and message:
            return message, str(kind)
    elif isinstance(inner, str) and inner:
        return inner, ""
    for key in ("message", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value, ""
    return fallback, ""


def connection_error(
    vendor: str, base_url: str, exc: BaseException, *, timeout: float | None = None
) -> ProviderError:
    """Connecting failed, or (`timeout`: the seconds waited) no data came in time."""
    if timeout is not None:
        return ProviderError(
            f"{_cap(vendor)} at {base_url} timed out: no data for {timeout:g} s. Check the "
            "connection and try again.",
            reason="timeout",
        )
    return ProviderError(
        f"Could not connect to {vendor} at {base_url}: {exc}. Check the connection and the "
        "base URL.",
        reason="connect",
    )


def cut_off(vendor: str, base_url: str, detail: str = "") -> ProviderError:
    """The connection broke in the middle of the answer."""
    extra = f": {detail}" if detail else ""
    return ProviderError(
        f"The connection to {vendor} ({base_url}) broke off in the middle of the answer"
        f"{extra}. Send again to retry.",
        reason="disconnected",
    )


def incomplete(vendor: str, base_url: str) -> ProviderError:
    """The stream ended without saying the answer was done."""
    return ProviderError(
        f"{_cap(vendor)} ({base_url}) closed the stream before the answer was complete (no "
        "finish reason). Send again to retry.",
        reason="incomplete",
    )


def malformed(vendor: str, base_url: str, exc: BaseException) -> ProviderError:
    return ProviderError(
        f"{_cap(vendor)} ({base_url}) sent a chunk that is not JSON ({exc}).",
        reason="malformed",
    )


def details_of(exc: Any) -> tuple[int, object]:
    """(status, body) of an SDK's status error."""
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None) or 0
    body = getattr(exc, "body", None)
    if body is None:  # not JSON: what the server wrote, as text
        response = getattr(exc, "response", None)
        try:
            body = response.text.strip() if response is not None else None
        except Exception:  # a body that was never read
            body = None
    return (status if isinstance(status, int) else 0), body
