"""What the three SDK providers (Claude, OpenAI, Gemini) share: the key kept out of every
repr and error, one client per call and closed after it, and the one way out for errors.

Each vendor's module says how its SDK makes a client (`_client`), closes it (`_close`),
streams one step (`_stream`), lists models (`_list`) and words its exceptions (`_plain`);
this base runs them so that every error — of a step or of a model listing — passes
through `redact.scrubbed` with the provider's key.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.redact import scrubbed, scrubbed_stream
from forkwise.core.runtime.providers.steps import StepItem

#: how long a model listing may take (it is asked from Preferences, a person waits)
LIST_TIMEOUT = 20.0


class SdkProvider:
    """A provider on a vendor's SDK; subclasses set `name`, `vendor`, `default_base_url`."""

    name: str
    vendor: str
    default_base_url: str = ""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        model: str,
        timeout: float,
        key_note: str,
    ) -> None:
        self._api_key = api_key or None
        self.base_url = (base_url or "").strip().rstrip("/") or None
        self.model = model
        self.timeout = timeout
        self._key_note = key_note

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"{type(self).__name__}({self.base_url!r}, model={self.model!r}, api_key={key})"

    @property
    def has_api_key(self) -> bool:
        return self._api_key is not None

    def models(self) -> list[dict[str, Any]]:
        """Any model name (None): a fork keeps its source's model; `default` for new ones."""
        return [{"provider": self.name, "model": None, "default": self.model or None}]

    def _where(self) -> str:
        return self.base_url or self.default_base_url

    # --- what each vendor's module says ------------------------------------------------

    def _client(self, timeout: float | None = None) -> Any:
        raise NotImplementedError

    async def _close(self, client: Any) -> None:
        await client.close()

    def _stream(
        self,
        client: Any,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        raise NotImplementedError

    async def _list(self, client: Any) -> list[str]:
        raise NotImplementedError

    def _plain(self, exc: BaseException) -> BaseException:
        raise NotImplementedError

    # --- run through the one choke point ---------------------------------------------

    @asynccontextmanager
    async def _opened(self, timeout: float | None = None) -> AsyncIterator[Any]:
        """A client for one call, closed after it whatever happens."""
        client = self._client(timeout)
        try:
            yield client
        finally:
            await self._close(client)

    def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncGenerator[StepItem, None]:
        """Yield TextDelta items as they arrive, then exactly one StepResult."""

        async def run() -> AsyncIterator[StepItem]:
            async with self._opened() as client:
                async for item in self._stream(client, transcript, choice, tools):
                    yield item

        return scrubbed_stream(run(), self._api_key, self._plain)

    async def list_models(self) -> list[str]:
        """The model ids the endpoint offers (the SDK's list-models call), sorted; a
        failure is a ProviderError in plain words with the key redacted."""
        try:
            async with self._opened(LIST_TIMEOUT) as client:
                names = await self._list(client)
        except Exception as exc:
            raise scrubbed(self._plain(exc), self._api_key) from None
        return sorted({n for n in names if n})
