"""The one place a provider's errors are cleaned of its secret before anyone sees them.

Endpoints echo what they were sent (the Authorization header, the key in a message), and
models can be made to repeat it in tool-call arguments. So every error a provider raises
passes through `scrubbed`, whole and before any clipping: the key, and every piece of it
at least `PIECE` characters long, is replaced in any letter case, in the message and in
every text detail. Only then is the message clipped to a readable length — a cut can no
longer leave a piece of the key that redaction fails to recognise.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final

from forkwise.core.errors import ProviderError

if TYPE_CHECKING:
    from forkwise.core.runtime.providers.steps import StepItem

#: the shortest piece of a key that is still redacted on its own
PIECE: Final = 8
#: how long a provider error message may be once redacted
MESSAGE_LIMIT: Final = 1200
MASK: Final = "***"


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` and every substring of it of `PIECE` or more characters
    replaced by `***`, compared without regard to case."""
    if not secret or not text:
        return text
    key = secret.casefold()
    low = text.casefold()
    if len(low) != len(text):  # a case fold that changes lengths: compare as given
        low, key = text, secret
    if len(key) < PIECE:
        return _mask(text, _spans_of(low, key))
    pieces = {key[i : i + PIECE] for i in range(len(key) - PIECE + 1)}
    covered: list[tuple[int, int]] = []
    for i in range(len(low) - PIECE + 1):
        if low[i : i + PIECE] in pieces:
            if covered and covered[-1][1] >= i:
                covered[-1] = (covered[-1][0], i + PIECE)
            else:
                covered.append((i, i + PIECE))
    return _mask(text, covered)


def _spans_of(low: str, key: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = low.find(key)
    while start >= 0:
        spans.append((start, start + len(key)))
        start = low.find(key, start + len(key))
    return spans


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(MASK)
        at = end
    out.append(text[at:])
    return "".join(out)


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def scrubbed(exc: BaseException, secret: str | None, **extra: Any) -> ProviderError:
    """The error a provider may let out for `exc`: a ProviderError whose message and text
    details are redacted, then clipped. Raise it `from None`: the original, which may
    quote the key, must not travel along as its cause."""
    if isinstance(exc, ProviderError):
        message, details = exc.message, dict(exc.details)
    else:
        message = f"The provider failed unexpectedly: {type(exc).__name__}: {exc}"
        details = {"reason": "internal"}
    details.update(extra)
    clean = {k: _clean(v, secret) for k, v in details.items()}
    return ProviderError(clip(redact(message, secret)), **clean)


def _clean(value: Any, secret: str | None) -> Any:
    if isinstance(value, str):
        return clip(redact(value, secret))
    if isinstance(value, dict):
        return {k: _clean(v, secret) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, secret) for v in value]
    return value


async def scrubbed_stream(
    items: AsyncIterator[StepItem],
    secret: str | None,
    plain: Callable[[BaseException], BaseException],
) -> AsyncGenerator[StepItem, None]:
    """A provider's step stream with the one way out for its errors: `plain` puts the
    SDK's exception in plain words, `scrubbed` redacts it whole, then clips it."""
    try:
        async for item in items:
            yield item
    except Exception as exc:
        raise scrubbed(plain(exc), secret) from None
