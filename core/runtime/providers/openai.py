"""OpenAI models, and any OpenAI-compatible endpoint, through OpenAI's SDK (`openai`).

Chat Completions (`api="chat"`) works with every compatible server (hosted APIs,
llama.cpp, vLLM, Ollama, LM Studio …); the Responses API (`api="responses"`) is OpenAI's
own. The SDK does the wire work — server-sent events, retries of 429/5xx with its
back-off, timeouts — and this module turns the stream into a step: text deltas, then the
whole text, reasoning, tool calls and the usage. Every failure leaves as a
`ProviderError` in plain words, through the one redaction choke point. The key is passed
in (looked up by `settings`); it never appears in an error or a repr.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from forkwise.core.errors import ProviderError
from forkwise.core.log.usage import openai_tokens
from forkwise.core.runtime.providers import openai_wire, sdk_errors
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.sdk_provider import SdkProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta, ToolCall

NAME: Final = "openai"
KEY_ENV: Final = "FORKWISE_API_KEY"
DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
APIS: Final = ("chat", "responses")


class OpenAICompatibleProvider(SdkProvider):
    """One assistant step per call, streamed from an OpenAI or OpenAI-compatible endpoint.

    `timeout` bounds each wait for data, `connect_timeout` connecting; `max_retries` is
    the SDK's (429 and 5xx are retried with its back-off). `key_note` says why there is
    no key (e.g. "keyring unavailable: …"); it is added to authentication errors."""

    name = NAME

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        reasoning_effort: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        key_note: str = "",
        key_env: str = KEY_ENV,
        api: str = "chat",
        max_retries: int = 2,
        vendor: str = "the model endpoint",
    ) -> None:
        base = base_url.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ProviderError(
                f"The model endpoint URL must start with http:// or https:// (got {base_url!r}).",
                base_url=base_url,
            )
        if timeout <= 0 or connect_timeout <= 0:
            raise ProviderError("Provider timeouts must be positive numbers of seconds.")
        if api not in APIS:
            raise ProviderError(f"Unknown OpenAI API {api!r}; expected chat or responses.")
        super().__init__(
            api_key=api_key, base_url=base, model=model, timeout=timeout, key_note=key_note
        )
        self.reasoning_effort = reasoning_effort or None
        self.connect_timeout = connect_timeout
        self.api = api
        self.max_retries = max_retries
        self.vendor = vendor
        self._key_env = key_env
        self.default_base_url = base  # always given here: `_where()` is this endpoint

    @property
    def url(self) -> str:
        return f"{self._where()}/{'chat/completions' if self.api == 'chat' else 'responses'}"

    def default_choice(self) -> ModelChoice:
        return ModelChoice(NAME, self.model, self.reasoning_effort)

    def request_body(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        """The keyword arguments of the SDK call for one step (pure; the tests read it)."""
        effort = choice.reasoning if choice.reasoning is not None else self.reasoning_effort
        model = choice.model or self.model
        if self.api == "responses":
            instructions, items = openai_wire.responses_input(transcript)
            body: dict[str, Any] = {
                "model": model,
                "input": items,
                "stream": True,
                # nothing kept on OpenAI's side: the reasoning comes back encrypted with
                # each reply and is sent back with the history, as Codex does
                "store": False,
                "include": ["reasoning.encrypted_content"],
            }
            if instructions:
                body["instructions"] = instructions
            if tools:
                body["tools"] = [openai_wire.responses_tool(t) for t in tools]
            if effort:
                body["reasoning"] = {"effort": effort}
            return body
        body = {
            "model": model,
            "messages": openai_wire.chat_messages(transcript),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = [openai_wire.chat_tool(t) for t in tools]
        if effort:
            body["reasoning_effort"] = effort
        return body

    def _client(self, timeout: float | None = None) -> Any:
        import openai

        return openai.AsyncOpenAI(
            # never None: the SDK would look in the environment itself; without a key a
            # placeholder it never sends (a local server needs none)
            api_key=self._api_key or "unused",
            base_url=self._where(),
            timeout=openai.Timeout(timeout or self.timeout, connect=self.connect_timeout),
            max_retries=self.max_retries,
        )

    def _no_key_headers(self) -> dict[str, Any]:
        """Without a key no Authorization header at all (not the placeholder)."""
        if self._api_key:
            return {}
        import openai

        return {"extra_headers": {"Authorization": openai.omit}}

    async def _list(self, client: Any) -> list[str]:
        page = await client.models.list(**self._no_key_headers())
        return [model.id async for model in page]

    async def _stream(
        self,
        client: Any,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        body = {**self.request_body(transcript, choice, tools), **self._no_key_headers()}
        step = _StepBuilder(str(body["model"]))
        if self.api == "responses":
            stream = await self._respond(client, body)
            async with stream:
                async for event in stream:
                    delta = step.add_response_event(event)
                    if delta:
                        yield TextDelta(delta)
        else:
            stream = await client.chat.completions.create(**body)
            async with stream:
                async for chunk in stream:
                    delta = step.add_chunk(chunk)
                    if delta:
                        yield TextDelta(delta)
        if not step.finished:
            raise sdk_errors.incomplete(self.vendor, self._where())
        yield step.result()

    async def _respond(self, client: Any, body: dict[str, Any]) -> Any:
        """`responses.create`; when OpenAI cannot verify the encrypted reasoning sent back
        (made for another organisation: a Codex session signed in with ChatGPT, continued
        with an API key), once more without it — the conversation goes on without the
        earlier reasoning rather than not at all."""
        import openai

        try:
            return await client.responses.create(**body)
        except openai.BadRequestError as exc:
            kept = [i for i in body["input"] if i.get("type") != "reasoning"]
            said = f"{getattr(exc, 'code', '')} {exc.message}".lower()
            if len(kept) == len(body["input"]) or "encrypted" not in said:
                raise
        return await client.responses.create(**{**body, "input": kept})

    def _plain(self, exc: BaseException) -> BaseException:
        """The SDK's exception as a ProviderError in plain words (others pass as they are)."""
        import openai

        if isinstance(exc, openai.APIStatusError):
            status, body = sdk_errors.details_of(exc)
            said, kind = sdk_errors.error_text(body, exc.message)
            return self._named(
                sdk_errors.status_error(
                    self.vendor,
                    status,
                    said,
                    key_env=self._key_env,
                    has_key=self._api_key is not None,
                    key_note=self._key_note,
                    kind=kind,
                    retries=self.max_retries,
                    base_url=self._where(),
                )
            )
        if isinstance(exc, openai.APITimeoutError):
            return self._named(
                sdk_errors.connection_error(self.vendor, self._where(), exc, timeout=self.timeout)
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            if "incomplete" in str(cause).lower() or "peer closed" in str(cause).lower():
                return self._named(sdk_errors.cut_off(self.vendor, self._where(), str(cause)))
            return self._named(
                sdk_errors.connection_error(self.vendor, self._where(), cause)
            )
        if isinstance(exc, openai.APIError):  # an error event inside the stream
            said, _ = sdk_errors.error_text({"error": getattr(exc, "body", None)}, exc.message)
            return self._named(
                ProviderError(
                    f"{self.vendor} reported an error in the middle of the answer: {said}",
                    reason="stream-error",
                )
            )
        if isinstance(exc, ProviderError):
            return self._named(exc)
        if isinstance(exc, ValueError) and type(exc).__name__ == "JSONDecodeError":
            return self._named(sdk_errors.malformed(self.vendor, self._where(), exc))
        if type(exc).__module__.startswith(("httpx", "httpcore", "h11", "h2")):
            return self._named(sdk_errors.cut_off(self.vendor, self._where(), str(exc)))
        return exc

    def _named(self, exc: ProviderError) -> ProviderError:
        """`exc` naming the endpoint's URL in its details."""
        details = dict(exc.details)
        details.setdefault("url", self.url)
        return ProviderError(exc.message, **details)


@dataclass(slots=True)
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: str = ""


class _StepBuilder:
    """Accumulates content, reasoning, index-addressed tool-call fragments and the usage."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _CallParts] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        #: OpenAI's encrypted reasoning items, kept to be sent back with the history
        self.thinking: list[dict[str, Any]] = []

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    # --- Chat Completions ---------------------------------------------------------------

    def add_chunk(self, chunk: Any) -> str:
        """Fold one streamed chunk in; returns the new content text (may be empty)."""
        if getattr(chunk, "usage", None) is not None:
            self._usage(chunk.usage.model_dump(exclude_none=True), getattr(chunk, "model", None))
        if not chunk.choices:
            return ""  # a usage-only chunk
        choice = chunk.choices[0]
        delta = choice.delta
        if delta is not None:
            extra = delta.model_extra or {}
            for key in ("reasoning_content", "reasoning"):
                value = extra.get(key)
                if isinstance(value, str) and value:
                    self.reasoning.append(value)
                    break
            for call in delta.tool_calls or ():
                self._add_call_fragment(
                    call.index,
                    call.id,
                    call.function.name if call.function else None,
                    call.function.arguments if call.function else None,
                )
        if choice.finish_reason:
            self.finish_reason = str(choice.finish_reason)
        content = delta.content if delta is not None else None
        if isinstance(content, str) and content:
            self.text.append(content)
            return content
        return ""

    # --- Responses ------------------------------------------------------------------------

    def add_response_event(self, event: Any) -> str:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            self.text.append(event.delta)
            return str(event.delta)
        if kind == "response.reasoning_summary_text.delta":
            self.reasoning.append(event.delta)
        elif kind == "response.output_item.done":
            item = event.item
            sealed = getattr(item, "encrypted_content", None)
            if getattr(item, "type", "") == "reasoning" and sealed:
                said = "".join(str(getattr(p, "text", "")) for p in item.summary or ())
                self.thinking.append({"type": "reasoning", "text": said,
                                      "encrypted": sealed, "vendor": NAME})
            elif getattr(item, "type", "") == "function_call":
                index = len(self.calls)
                self._add_call_fragment(index, item.call_id, item.name, item.arguments)
        elif kind in ("response.completed", "response.incomplete"):
            response = event.response
            self.finish_reason = getattr(response, "status", None) or "completed"
            if response.usage is not None:
                self._usage(response.usage.model_dump(exclude_none=True), response.model)
        elif kind == "response.failed":
            error = getattr(event.response, "error", None)
            said = getattr(error, "message", None) or "the response failed"
            raise ProviderError(f"The model reported an error: {said}", reason="stream-error")
        return ""

    # --- both -------------------------------------------------------------------------

    def _usage(self, raw: dict[str, Any], model: object) -> None:
        self.usage = {
            "model": model if isinstance(model, str) and model else self.model,
            "provider": NAME,
            **openai_tokens(raw),
            "raw": raw,
        }

    def _add_call_fragment(
        self, index: int | None, call_id: str | None, name: str | None, arguments: str | None
    ) -> None:
        if index is None:
            # Some servers omit the index: a new id starts a call, otherwise continue the last.
            known = {c.id for c in self.calls.values()}
            if (call_id and call_id not in known) or not self.calls:
                index = len(self.calls)
            else:
                index = max(self.calls)
        parts = self.calls.setdefault(index, _CallParts())
        if call_id and not parts.id:
            parts.id = call_id
        if name and name != parts.name:
            parts.name += name
        if arguments:
            parts.arguments += arguments

    def result(self) -> StepResult:
        calls = tuple(self._tool_call(i, self.calls[i]) for i in sorted(self.calls))
        return StepResult(
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            tool_calls=calls,
            thinking=tuple(self.thinking),
            usage=self.usage,
        )

    @staticmethod
    def _tool_call(index: int, parts: _CallParts) -> ToolCall:
        if not parts.name:
            raise ProviderError(
                f"The model sent tool call #{index} without a tool name.", reason="bad-tool-call"
            )
        raw = parts.arguments.strip()
        try:
            args = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError as exc:
            raise ProviderError(
                f"The model called {parts.name} with arguments that are not valid JSON "
                f"({exc}): {raw}",
                reason="bad-tool-call",
                tool=parts.name,
            ) from exc
        if not isinstance(args, dict):
            raise ProviderError(
                f"The model called {parts.name} with arguments that are not a JSON object: "
                f"{raw}",
                reason="bad-tool-call",
                tool=parts.name,
            )
        return ToolCall(id=parts.id or f"call_{uuid.uuid4().hex[:12]}", name=parts.name, args=args)
