"""The built-in offline provider: no network, deterministic, the default.

It exists so the app can be tried (and tested) without any model endpoint. Scripted
behaviour, keyed on the last user message of the transcript:

* `/tool NAME {json args}` — calls tool NAME with those arguments (which then waits for the
  person's approval); after the result comes back it summarises the tool output;
* `/fail [text]` — the step fails with a provider error carrying `text`;
* `/slow [text]` — like a plain message, but streams one word every 50 ms (to try cancel);
* anything else — a deterministic reply that echoes the message and names the model.

A `/slow` reply streams word by word; any other reply is there at once and streams as
one piece. The same transcript always gives the same reply and the same tool call ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import orjson

from forkwise.core.errors import ProviderError
from forkwise.core.runtime.providers.base import ModelChoice

if TYPE_CHECKING:  # a step's types are imported by the step: a listing, which imports this
    # module for the default model, makes none (`steps`)
    from forkwise.core.runtime.providers.steps import StepItem, StepResult

NAME: Final = "offline"
DEFAULT_MODEL: Final = "forkwise-offline"
LABEL: Final = "Offline demo model (built in, no network)"
SLOW_DELAY: Final = 0.05


def default_choice() -> ModelChoice:
    return ModelChoice(NAME, DEFAULT_MODEL)


def model_select_draft(choice: ModelChoice) -> dict[str, Any]:
    """The `model/select` draft for a choice, labelled when it is the offline provider."""
    draft = choice.to_event()
    if choice.provider == NAME:
        draft["label"] = LABEL
        draft["offline"] = True
    return draft


class OfflineProvider:
    """Deterministic scripted replies; see the module docstring for the script."""

    name = NAME
    #: scripted replies do not depend on the model named, so it serves any model name
    any_model = True

    def models(self) -> list[dict[str, Any]]:
        return [{"provider": NAME, "model": DEFAULT_MODEL, "label": LABEL, "offline": True}]

    async def stream_step(
        self,
        transcript: Sequence[Mapping[str, Any]],
        choice: ModelChoice,
        tools: Sequence[Mapping[str, Any]],
    ) -> AsyncGenerator[StepItem, None]:
        from forkwise.core.runtime.providers.steps import TextDelta

        result = plan_reply(transcript, choice, tools)
        if _last_user_text(transcript).startswith("/slow"):
            words = result.text.split(" ")
            for i, word in enumerate(words):
                await asyncio.sleep(SLOW_DELAY)
                yield TextDelta(word if i == len(words) - 1 else word + " ")
        elif result.text:
            yield TextDelta(result.text)  # the reply is there at once: one piece
        yield result


def plan_reply(
    transcript: Sequence[Mapping[str, Any]],
    choice: ModelChoice,
    tools: Sequence[Mapping[str, Any]],
) -> StepResult:
    """The whole step the offline model produces for a transcript (pure)."""
    from forkwise.core.runtime.providers.steps import StepResult

    if transcript and transcript[-1].get("role") == "tool":
        return StepResult(text=_summarise_tool_results(transcript))
    text = _last_user_text(transcript)
    if text.startswith("/fail"):
        raise ProviderError(text[len("/fail") :].strip() or "scripted failure (/fail)")
    if text.startswith("/tool"):
        return _tool_step(text, transcript, tools)
    if text.startswith("/slow"):
        text = text[len("/slow") :].strip() or "a slow reply, one word at a time, to try cancel"
    turns = sum(1 for m in transcript if m.get("role") == "user")
    words = len(text.split())
    return StepResult(
        text=(
            f"[offline · {choice.model}] You said: “{text}” ({words} words; message {turns} "
            "of this conversation). This built-in model needs no network and always answers "
            'the same way. Try /tool list_dir {"path": "."} to see a tool call, or configure '
            "an OpenAI-compatible endpoint for real answers."
        )
    )


def _last_user_text(transcript: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(transcript):
        if message.get("role") == "user":
            return str(message.get("content", "")).strip()
    return ""


def _tool_step(
    text: str, transcript: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> StepResult:
    from forkwise.core.runtime.providers.steps import StepResult, ToolCall

    rest = text[len("/tool") :].strip()
    name, _, raw_args = rest.partition(" ")
    if not name:
        return StepResult(text="Usage: /tool NAME {json arguments}")
    try:
        args = orjson.loads(raw_args) if raw_args.strip() else {}
    except orjson.JSONDecodeError as exc:
        return StepResult(text=f"I could not read the tool arguments as JSON ({exc}).")
    if not isinstance(args, dict):
        return StepResult(text="Tool arguments must be a JSON object.")
    known = {str(t.get("function", {}).get("name")) for t in tools}
    if known and name not in known:
        return StepResult(text=f"There is no tool {name!r}; available: {', '.join(sorted(known))}.")
    import hashlib  # a scripted tool call's id: a listing, which imports this module, makes none

    digest = hashlib.sha256(orjson.dumps([len(transcript), text])).hexdigest()[:8]
    call = ToolCall(id=f"call-{digest}", name=name, args=args)
    return StepResult(text=f"Calling {name}.", tool_calls=(call,))


def _summarise_tool_results(transcript: Sequence[Mapping[str, Any]]) -> str:
    results: list[str] = []
    for message in reversed(transcript):
        if message.get("role") != "tool":
            break
        content = str(message.get("content", ""))
        short = content if len(content) <= 400 else content[:400] + " …"
        results.append(short)
    results.reverse()
    lines = "\n".join(f"- {r}" for r in results)
    return f"The tool returned:\n{lines}"
