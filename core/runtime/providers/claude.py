"""Claude through Anthropic's SDK (`anthropic`): the Messages API, streamed.

The SDK does the wire work: server-sent events, retries of 429/5xx/overloaded with its
own back-off (honouring `retry-after`), timeouts. This module maps the transcript to a
request (`anthropic_wire`), streams the text, and turns the final message into a step:
text, thinking blocks with their signatures (sent back verbatim on the next request),
tool calls and the usage. The SDK reads $ANTHROPIC_BASE_URL when no base URL is given;
the key is passed in (looked up by `settings`), never kept anywhere else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final

from forkwise.core.errors import ProviderError
from forkwise.core.log.usage import anthropic_tokens
from forkwise.core.runtime.providers import sdk_errors
from forkwise.core.runtime.providers.anthropic_wire import DEFAULT_MAX_TOKENS, request_params
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.sdk_provider import SdkProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta, ToolCall

NAME: Final = "anthropic"
VENDOR: Final = "Anthropic"
KEY_ENV: Final = "ANTHROPIC_API_KEY"
BASE_URL_ENV: Final = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL: Final = "https://api.anthropic.com"


class ClaudeProvider(SdkProvider):
    """One assistant step per call from the Messages API. Serves any Claude model name
    (the API says when it does not know one)."""

    name = NAME
    vendor = VENDOR
    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        model: str = "",
        timeout: float = 600.0,
        max_retries: int = 2,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        key_note: str = "",
    ) -> None:
        super().__init__(
            api_key=api_key, base_url=base_url, model=model, timeout=timeout, key_note=key_note
        )
        self.max_retries = max_retries
        self.max_tokens = max_tokens

    def _client(self, timeout: float | None = None) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            # an empty key rather than none: the SDK would look in the environment and
            # the profiles itself, and the key this provider was given is the one to use
            api_key=self._api_key or "",
            base_url=self.base_url,
            timeout=timeout or self.timeout,
            max_retries=self.max_retries,
        )

    async def _list(self, client: Any) -> list[str]:
        return [model.id async for model in client.models.list(limit=1000)]

    async def _stream(
        self,
        client: Any,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        model = choice.model or self.model
        params = request_params(transcript, model, tools, choice.reasoning, self.max_tokens)
        stopped = False
        async with client.messages.stream(**params) as stream:
            async for event in stream:
                if event.type == "text" and event.text:
                    yield TextDelta(event.text)
                elif event.type == "message_stop":
                    stopped = True
            if not stopped:
                raise sdk_errors.cut_off(VENDOR, self._where())
            final = await stream.get_final_message()
        yield self._result(final, model)

    def _result(self, message: Any, model: str) -> StepResult:
        texts: list[str] = []
        thinking: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for block in message.content:
            kind = block.type
            if kind == "text":
                texts.append(block.text)
            elif kind == "thinking":
                thinking.append(
                    {"type": "reasoning", "text": block.thinking, "signature": block.signature}
                )
            elif kind == "redacted_thinking":
                thinking.append({"type": "reasoning", "text": "", "redacted": block.data})
            elif kind == "tool_use":
                args = block.input if isinstance(block.input, dict) else {"input": block.input}
                calls.append(ToolCall(id=block.id, name=block.name, args=args))
        raw = message.usage.model_dump(exclude_none=True) if message.usage else None
        usage = None
        if raw is not None:
            usage = {
                "model": message.model or model,
                "provider": NAME,
                **anthropic_tokens(raw),
                "message": message.id,
                "raw": raw,
            }
        return StepResult(
            text="".join(texts),
            reasoning="".join(str(t["text"]) for t in thinking),
            tool_calls=tuple(calls),
            thinking=tuple(thinking),
            usage=usage,
        )

    def _plain(self, exc: BaseException) -> BaseException:
        """The SDK's exception as a ProviderError in plain words (others pass as they are)."""
        import anthropic

        if isinstance(exc, anthropic.APIStatusError):
            status, body = sdk_errors.details_of(exc)
            said, kind = sdk_errors.error_text(body, exc.message)
            return sdk_errors.status_error(
                VENDOR,
                status,
                said,
                key_env=KEY_ENV,
                has_key=self._api_key is not None,
                key_note=self._key_note,
                kind=kind,
                retries=self.max_retries,
                base_url=self._where(),
            )
        if isinstance(exc, anthropic.APITimeoutError):
            return sdk_errors.connection_error(VENDOR, self._where(), exc, timeout=self.timeout)
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__
            if cause is not None and "incomplete" in str(cause).lower():
                return sdk_errors.cut_off(VENDOR, self._where(), str(cause))
            return sdk_errors.connection_error(VENDOR, self._where(), cause or exc)
        if isinstance(exc, ProviderError):
            return exc
        if type(exc).__module__.startswith(("httpx", "httpcore", "h11", "h2")):
            return sdk_errors.cut_off(VENDOR, self._where(), f"{type(exc).__name__}: {exc}")
        return exc
