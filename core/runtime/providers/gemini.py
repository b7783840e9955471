"""Gemini through Google's SDK (`google-genai`): generateContent, streamed.

The transcript becomes `contents` (user and model turns; a tool call is a
`function_call` part, its result a `function_response` part named after the call's tool;
images as `inline_data`), system entries the `system_instruction`, Forkwise's tools
`function_declarations` with their JSON schema. The SDK reads $GOOGLE_GEMINI_BASE_URL when
no base URL is given; retries (429, 5xx) are the SDK's, with its back-off. A thought
signature Gemini returns is kept on the step's reasoning (`vendor: gemini`) and goes
back on the call it came with.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final

import orjson

from forkwise.core.errors import ProviderError
from forkwise.core.log.usage import gemini_tokens
from forkwise.core.runtime.providers import sdk_errors
from forkwise.core.runtime.providers.base import ModelChoice
from forkwise.core.runtime.providers.openai_wire import image_url
from forkwise.core.runtime.providers.sdk_provider import SdkProvider
from forkwise.core.runtime.providers.steps import StepItem, StepResult, TextDelta, ToolCall

NAME: Final = "gemini"
VENDOR: Final = "Gemini"
KEY_ENV: Final = "GEMINI_API_KEY"
DEFAULT_BASE_URL: Final = "https://generativelanguage.googleapis.com"
THINKING_BUDGETS: Final = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}

Json = dict[str, Any]


def contents_of(transcript: Sequence[Mapping[str, Any]]) -> tuple[str, list[Json]]:
    """(system instruction, contents) for a transcript (pure; the tests read it)."""
    system: list[str] = []
    out: list[Json] = []
    names: dict[str, str] = {}

    def add(role: str, parts: list[Json]) -> None:
        if not parts:
            return
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for entry in transcript:
        role = entry.get("role")
        text = str(entry.get("content") or "")
        if role == "system":
            if text:
                system.append(text)
        elif role == "user":
            parts: list[Json] = [{"text": text}] if text.strip() else []
            for block in entry.get("images") or ():
                url = image_url(block)
                if url and url.startswith("data:") and ";base64," in url:
                    mime, _, data = url[5:].partition(";base64,")
                    parts.append({"inline_data": {"mime_type": mime, "data": data}})
            add("user", parts)
        elif role == "assistant":
            parts = [{"text": text}] if text.strip() else []
            signature = _own_signature(entry)
            for call in entry.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(function, Mapping):
                    continue
                name = str(function.get("name", ""))
                names[str(call.get("id", ""))] = name
                part: Json = {
                    "function_call": {
                        "name": name,
                        "args": _args(function.get("arguments")),
                        "id": str(call.get("id", "")),
                    }
                }
                if signature:
                    part["thought_signature"] = base64.b64decode(signature)
                    signature = None  # it belongs to the first call
                parts.append(part)
            add("model", parts)
        elif role == "tool":
            call_id = str(entry.get("tool_call_id", ""))
            response = {
                "function_response": {
                    "name": names.get(call_id, "tool"),
                    "response": {"output": text},
                    "id": call_id,
                }
            }
            add("user", [response])
    while out and out[0]["role"] != "user":
        out.pop(0)
    return "\n\n".join(system), out


def _own_signature(entry: Mapping[str, Any]) -> str | None:
    """A thought signature Gemini made for this reply (never another vendor's)."""
    for part in entry.get("parts") or ():
        if (
            isinstance(part, Mapping)
            and part.get("type") == "reasoning"
            and part.get("vendor") == NAME
            and part.get("signature")
        ):
            return str(part["signature"])
    return None


def _args(raw: object) -> Json:
    if isinstance(raw, str) and raw.strip():
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {}


def tool_declarations(tools: Sequence[Mapping[str, Any]]) -> list[Json]:
    out: list[Json] = []
    for tool in tools:
        function = tool.get("function") if tool.get("type") == "function" else tool
        if not isinstance(function, Mapping):
            continue
        out.append(
            {
                "name": str(function.get("name", "")),
                "description": str(function.get("description", "")),
                "parameters_json_schema": dict(
                    function.get("parameters") or {"type": "object", "properties": {}}
                ),
            }
        )
    return [{"function_declarations": out}] if out else []


class GeminiProvider(SdkProvider):
    """One assistant step per call from the Gemini API. Serves any Gemini model name."""

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
        attempts: int = 3,
        retry_delay: float = 1.0,
        key_note: str = "",
    ) -> None:
        super().__init__(
            api_key=api_key, base_url=base_url, model=model, timeout=timeout, key_note=key_note
        )
        self.attempts = attempts
        self.retry_delay = retry_delay

    def _client(self, timeout: float | None = None) -> Any:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int((timeout or self.timeout) * 1000),
            retry_options=types.HttpRetryOptions(
                attempts=self.attempts, initial_delay=self.retry_delay, max_delay=8.0
            ),
        )
        return genai.Client(api_key=self._api_key or "unused", http_options=options)

    async def _close(self, client: Any) -> None:
        await client.aio.aclose()

    async def _list(self, client: Any) -> list[str]:
        """Models that generate content, named as a request names them (no `models/`)."""
        out: list[str] = []
        async for model in await client.aio.models.list(config={"page_size": 1000}):
            actions = model.supported_actions or ["generateContent"]
            if "generateContent" in actions:
                out.append(str(model.name or "").removeprefix("models/"))
        return out

    def request(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> Json:
        """The keyword arguments of `generate_content_stream` (pure; the tests read it)."""
        system, contents = contents_of(transcript)
        config: Json = {}
        if system:
            config["system_instruction"] = system
        declared = tool_declarations(tools)
        if declared:
            config["tools"] = declared
        if choice.reasoning and choice.reasoning not in ("none", "off"):
            budget = THINKING_BUDGETS.get(choice.reasoning, THINKING_BUDGETS["medium"])
            config["thinking_config"] = {"include_thoughts": True, "thinking_budget": budget}
        return {"model": choice.model or self.model, "contents": contents, "config": config}

    async def _stream(
        self,
        client: Any,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncIterator[StepItem]:
        from google.genai import types

        params = self.request(transcript, choice, tools)
        # the SDK's own types, so that it writes every field as the API names it
        params["contents"] = [types.Content.model_validate(c) for c in params["contents"]]
        params["config"] = types.GenerateContentConfig.model_validate(params["config"])
        texts: list[str] = []
        thoughts: list[str] = []
        signature: str | None = None
        calls: list[ToolCall] = []
        usage: Any = None
        model_version = ""
        finished = False
        stream = await client.aio.models.generate_content_stream(**params)
        async for chunk in stream:
            if chunk.usage_metadata is not None:
                usage = chunk.usage_metadata
            model_version = chunk.model_version or model_version
            for candidate in chunk.candidates or ():
                if candidate.finish_reason is not None:
                    finished = True
                content = candidate.content
                for part in (content.parts if content is not None else None) or ():
                    if part.thought_signature and signature is None:
                        # kept as base64 text, as the API sends it
                        signature = base64.b64encode(part.thought_signature).decode()
                    if part.function_call is not None:
                        call = part.function_call
                        calls.append(
                            ToolCall(
                                id=call.id or f"call_{uuid.uuid4().hex[:12]}",
                                name=call.name or "",
                                args=dict(call.args or {}),
                            )
                        )
                    elif part.text and part.thought:
                        thoughts.append(part.text)
                    elif part.text:
                        texts.append(part.text)
                        yield TextDelta(part.text)
        if not finished:
            raise sdk_errors.incomplete(VENDOR, self._where())
        thinking: tuple[Json, ...] = ()
        if signature is not None:
            said = "".join(thoughts)
            thinking = (
                {"type": "reasoning", "text": said, "signature": signature, "vendor": NAME},
            )
        counted = None
        if usage is not None:
            raw = usage.model_dump(exclude_none=True, mode="json")
            model = model_version or str(params["model"])
            counted = {"model": model, "provider": NAME, **gemini_tokens(raw), "raw": raw}
        yield StepResult(
            text="".join(texts),
            reasoning="".join(thoughts),
            tool_calls=tuple(calls),
            thinking=thinking,
            usage=counted,
        )

    def _plain(self, exc: BaseException) -> BaseException:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            status = exc.code if isinstance(exc.code, int) else 0
            kind = exc.status if isinstance(exc.status, str) else ""
            return sdk_errors.status_error(
                VENDOR,
                status,
                exc.message or str(exc),
                key_env=KEY_ENV,
                has_key=self._api_key is not None,
                key_note=self._key_note,
                kind="rate_limit_error" if kind == "RESOURCE_EXHAUSTED" else "",
                retries=self.attempts - 1,
                base_url=self._where(),
            )
        if isinstance(exc, ProviderError):
            return exc
        name = type(exc).__name__
        if "Timeout" in name:
            return sdk_errors.connection_error(VENDOR, self._where(), exc, timeout=self.timeout)
        if "Connect" in name:
            return sdk_errors.connection_error(VENDOR, self._where(), exc)
        if type(exc).__module__.startswith(("httpx", "httpcore", "h11", "h2", "aiohttp")):
            return sdk_errors.cut_off(VENDOR, self._where(), f"{name}: {exc}")
        return exc
