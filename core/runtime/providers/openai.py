"""An OpenAI-compatible Chat Completions provider, streamed over server-sent events.

Works with any endpoint that speaks `POST {base_url}/chat/completions` with
`stream: true` (hosted APIs, llama.cpp, vLLM, Ollama, LM Studio …). Every failure —
unreachable host, timeout, HTTP error, a chunk that is not JSON, a stream that stops
before it is finished — becomes a `ProviderError` that says what happened. The API key
is sent only in the Authorization header; it never appears in an error or a repr.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx
import orjson

from forkwise.core.errors import ProviderError
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.redact import scrubbed
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta, ToolCall

NAME: Final = "openai"
DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
ERROR_BODY_LIMIT: Final = 64 * 1024
_DONE: Final = "[DONE]"
_MESSAGE_KEYS: Final = ("role", "content", "tool_calls", "tool_call_id", "name")


class OpenAICompatibleProvider:
    """One assistant step per call, streamed from an OpenAI-compatible endpoint.

    `timeout` bounds each wait for data (and the write of the request); `connect_timeout`
    bounds connecting. Pass `client` to share one `httpx.AsyncClient` (the caller then
    owns and closes it); otherwise each step opens and closes its own. `key_note` says why
    there is no key (e.g. "keyring unavailable: …"); it is added to authentication errors.
    """

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
        client: httpx.AsyncClient | None = None,
        key_note: str = "",
    ) -> None:
        base = base_url.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ProviderError(
                f"The model endpoint URL must start with http:// or https:// (got {base_url!r}).",
                base_url=base_url,
            )
        if timeout <= 0 or connect_timeout <= 0:
            raise ProviderError("Provider timeouts must be positive numbers of seconds.")
        self.base_url = base
        self.model = model
        self.reasoning_effort = reasoning_effort or None
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._api_key = api_key or None
        self._client = client
        self._key_note = key_note

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"OpenAICompatibleProvider({self.base_url!r}, model={self.model!r}, api_key={key})"

    @property
    def has_api_key(self) -> bool:
        return self._api_key is not None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def default_choice(self) -> ModelChoice:
        return ModelChoice(NAME, self.model, self.reasoning_effort)

    def request_body(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        """The JSON body of the request for one step (pure; the tests check it)."""
        body: dict[str, Any] = {
            "model": choice.model or self.model,
            "messages": [_wire_message(m) for m in transcript],
            "stream": True,
        }
        if tools:
            body["tools"] = [_wire_tool(t) for t in tools]
        effort = choice.reasoning if choice.reasoning is not None else self.reasoning_effort
        if effort:
            body["reasoning_effort"] = effort
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncGenerator[StepItem, None]:
        """Yield TextDelta items as content arrives, then exactly one StepResult."""
        try:
            async for item in self._stream(transcript, choice, tools):
                yield item
        except Exception as exc:
            # the one way out for every error of this provider: redacted whole, then clipped
            raise scrubbed(exc, self._api_key) from None

    async def _stream(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        content = orjson.dumps(self.request_body(transcript, choice, tools))
        timeout = httpx.Timeout(self.timeout, connect=self.connect_timeout)
        if self._client is not None:
            async for item in self._exchange(self._client, content, timeout):
                yield item
            return
        async with httpx.AsyncClient() as client:
            async for item in self._exchange(client, content, timeout):
                yield item

    async def _exchange(
        self, client: httpx.AsyncClient, content: bytes, timeout: httpx.Timeout
    ) -> AsyncIterator[StepItem]:
        step = _StepBuilder()
        try:
            async with client.stream(
                "POST", self.url, content=content, headers=self._headers(), timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    raise await self._http_error(response)
                kind = response.headers.get("content-type", "")
                if kind.startswith("application/json"):
                    # The endpoint ignored `stream: true` and sent the whole completion.
                    step.add_completion(self._parse(await response.aread()))
                else:
                    async for data in _sse_data(response.aiter_lines()):
                        if data == _DONE:
                            step.done = True
                            break
                        delta = step.add_chunk(self._parse(data.encode()))
                        if delta:
                            yield TextDelta(delta)
        except httpx.ConnectTimeout as exc:
            raise self._error(
                f"Could not connect to the model endpoint {self.base_url} within "
                f"{self.connect_timeout:g} s.",
                "connect-timeout",
            ) from exc
        except httpx.TimeoutException as exc:
            raise self._error(
                f"The model endpoint {self.base_url} timed out: no data for {self.timeout:g} s.",
                "timeout",
            ) from exc
        except httpx.ConnectError as exc:
            raise self._error(
                f"Could not connect to the model endpoint {self.base_url}: {exc}.",
                "connect",
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise self._error(
                f"The connection to the model endpoint {self.base_url} broke off in the "
                f"middle of the answer: {exc}.",
                "disconnected",
            ) from exc
        except httpx.HTTPError as exc:
            raise self._error(
                f"The request to the model endpoint {self.base_url} failed: {exc}.", "http"
            ) from exc
        if not step.finished:
            raise self._error(
                f"The model endpoint {self.base_url} closed the stream before the answer was "
                "complete (no [DONE] and no finish reason).",
                "incomplete",
            )
        yield step.result()

    def _parse(self, raw: bytes) -> dict[str, Any]:
        try:
            chunk = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise self._error(
                f"The model endpoint {self.base_url} sent a chunk that is not JSON "
                f"({exc}): {_bounded(raw.decode('utf-8', 'replace'))}",
                "malformed",
            ) from exc
        if not isinstance(chunk, dict):
            raise self._error(
                f"The model endpoint {self.base_url} sent a chunk that is not a JSON object: "
                f"{_bounded(raw.decode('utf-8', 'replace'))}",
                "malformed",
            )
        if chunk.get("error"):
            raise self._error(
                f"The model endpoint {self.base_url} reported an error: {_error_text(chunk)}",
                "stream-error",
            )
        return chunk

    async def _http_error(self, response: httpx.Response) -> ProviderError:
        body = bytearray()
        async for piece in response.aiter_bytes():
            body += piece
            if len(body) >= ERROR_BODY_LIMIT:
                break
        text = bytes(body[:ERROR_BODY_LIMIT]).decode("utf-8", "replace")
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            parsed = None
        said = _error_text(parsed) if isinstance(parsed, dict) else None
        said = said or _bounded(text.strip()) or response.reason_phrase or "no details"
        hint = ""
        if response.status_code in (401, 403):
            if self._api_key:
                hint = " Check the API key (FORKWISE_API_KEY or the system keyring)."
            else:
                note = f" ({self._key_note})" if self._key_note else ""
                hint = (
                    f" No API key was sent{note}; set FORKWISE_API_KEY or save one in the "
                    "system keyring."
                )
        elif response.status_code == 404:
            hint = f" Check the base URL ({self.base_url}) and the model name."
        return self._error(
            f"The model endpoint answered HTTP {response.status_code}.{hint} It said: {said}",
            "http-status",
            status=response.status_code,
        )

    def _error(self, message: str, reason: str, **details: Any) -> ProviderError:
        """A ProviderError naming the endpoint; quoted server text stays whole here (it is
        redacted, then clipped, where every error leaves: `stream_step`)."""
        return ProviderError(message, reason=reason, url=self.url, **details)


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The `data` payload of each server-sent event (multi-line data joined by newlines)."""
    pending: list[str] = []
    async for line in lines:
        if not line:
            if pending:
                yield "\n".join(pending)
                pending = []
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        field_name, _, value = line.partition(":")
        if field_name == "data":
            pending.append(value.removeprefix(" "))
    if pending:
        # A final event without its blank line: hand it on, the caller judges it.
        yield "\n".join(pending)


@dataclass(slots=True)
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: str = ""


class _StepBuilder:
    """Accumulates content, reasoning and index-addressed tool-call fragments."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _CallParts] = {}
        self.finish_reason: str | None = None
        self.done = False

    @property
    def finished(self) -> bool:
        return self.done or self.finish_reason is not None

    def add_chunk(self, chunk: Mapping[str, Any]) -> str:
        """Fold one streamed chunk in; returns the new content text (may be empty)."""
        choice = _first_choice(chunk)
        if choice is None:
            return ""  # e.g. a trailing usage-only chunk
        delta = choice.get("delta")
        delta = delta if isinstance(delta, Mapping) else {}
        self._add_reasoning(delta)
        for call in _list_of_maps(delta.get("tool_calls")):
            self._add_call_fragment(call)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            return content
        return ""

    def add_completion(self, body: Mapping[str, Any]) -> None:
        """Fold in a whole non-streamed completion (`choices[0].message`)."""
        choice = _first_choice(body)
        message = choice.get("message") if choice is not None else None
        if not isinstance(message, Mapping):
            raise ProviderError(
                "The model endpoint sent a completion without a message.", reason="malformed"
            )
        self._add_reasoning(message)
        if isinstance(message.get("content"), str):
            self.text.append(message["content"])
        for position, call in enumerate(_list_of_maps(message.get("tool_calls"))):
            self._add_call_fragment({"index": position, **call})
        self.done = True

    def _add_reasoning(self, part: Mapping[str, Any]) -> None:
        for key in ("reasoning_content", "reasoning"):
            value = part.get(key)
            if isinstance(value, str) and value:
                self.reasoning.append(value)
                return

    def _add_call_fragment(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        call_id = fragment.get("id")
        if not isinstance(index, int) or isinstance(index, bool):
            # Some servers omit the index: a new id starts a call, otherwise continue the last.
            known = {c.id for c in self.calls.values()}
            if (isinstance(call_id, str) and call_id and call_id not in known) or not self.calls:
                index = len(self.calls)
            else:
                index = max(self.calls)
        parts = self.calls.setdefault(index, _CallParts())
        if isinstance(call_id, str) and call_id and not parts.id:
            parts.id = call_id
        function = fragment.get("function")
        if isinstance(function, Mapping):
            name = function.get("name")
            if isinstance(name, str) and name and name != parts.name:
                parts.name += name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                parts.arguments += arguments
            elif isinstance(arguments, Mapping):
                parts.arguments += orjson.dumps(arguments).decode()

    def result(self) -> StepResult:
        calls = tuple(self._tool_call(i, self.calls[i]) for i in sorted(self.calls))
        return StepResult(
            text="".join(self.text), reasoning="".join(self.reasoning), tool_calls=calls
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
                f"({exc}): {_bounded(raw)}",
                reason="bad-tool-call",
                tool=parts.name,
            ) from exc
        if not isinstance(args, dict):
            raise ProviderError(
                f"The model called {parts.name} with arguments that are not a JSON object: "
                f"{_bounded(raw)}",
                reason="bad-tool-call",
                tool=parts.name,
            )
        return ToolCall(id=parts.id or f"call_{uuid.uuid4().hex[:12]}", name=parts.name, args=args)


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript message as the endpoint expects it (unknown keys dropped)."""
    out = {k: message[k] for k in _MESSAGE_KEYS if k in message}
    if out.get("tool_calls") and not out.get("content"):
        out["content"] = None  # the most widely accepted form for a tool-call-only reply
    return out


def _wire_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool spec in the OpenAI `tools` format; a bare {name, description, parameters}
    is wrapped."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        return dict(tool)
    function = {
        "name": tool.get("name"),
        "description": tool.get("description", ""),
        "parameters": tool.get("parameters", {"type": "object", "properties": {}}),
    }
    return {"type": "function", "function": function}


def _first_choice(chunk: Mapping[str, Any]) -> Mapping[str, Any] | None:
    choices = _list_of_maps(chunk.get("choices"))
    return choices[0] if choices else None


def _list_of_maps(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, Mapping)]


def _error_text(body: Mapping[str, Any]) -> str:
    """The human part of an error body, in the shapes servers use."""
    candidates: Iterable[object] = (body.get("error"), body.get("message"), body.get("detail"))
    for value in candidates:
        if isinstance(value, Mapping):
            inner = value.get("message")
            if isinstance(inner, str) and inner:
                return _bounded(inner)
        elif isinstance(value, str) and value:
            return _bounded(value)
    return _bounded(orjson.dumps(body).decode())


def _bounded(text: str, limit: int = ERROR_BODY_LIMIT) -> str:
    """Server text as quoted in an error before redaction: bounded only in memory."""
    return text if len(text) <= limit else text[:limit] + " …"
