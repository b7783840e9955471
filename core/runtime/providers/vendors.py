"""Which provider serves a model an agent used: the vendor behind a model name.

A session imported from Claude Code selects `anthropic`/`claude-…`; from Codex `openai`/
`gpt-…`; from pi whatever pi named (`anthropic`, `openai`, `google`, a router …); from
Gemini CLI `gemini-…`. A fork continues with the provider of that vendor when one is
configured, so the model name decides, and the provider the agent named only when the
name says nothing.
"""

from __future__ import annotations

from typing import Final

from forkwise.core.runtime.providers.base import ModelChoice

ANTHROPIC: Final = "anthropic"
OPENAI: Final = "openai"
GEMINI: Final = "gemini"
#: model name prefixes of each vendor (a router's "vendor/model" is read after the slash)
_PREFIXES: Final = (
    (ANTHROPIC, ("claude",)),
    (OPENAI, ("gpt-", "o1", "o3", "o4", "codex-", "chatgpt-", "gpt5")),
    (GEMINI, ("gemini-", "gemma-")),
)
#: provider names agents write for each vendor
_PROVIDERS: Final = {
    "anthropic": ANTHROPIC,
    "claude": ANTHROPIC,
    "openai": OPENAI,
    "openai-codex": OPENAI,
    "azure-openai": OPENAI,
    "google": GEMINI,
    "gemini": GEMINI,
    "google-gemini-cli": GEMINI,
    "google-vertex": GEMINI,
}


def vendor_of(provider: str | None, model: str | None) -> str | None:
    """The vendor (a provider name of this app) whose API serves `model`, or None."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    for vendor, prefixes in _PREFIXES:
        if name.startswith(prefixes):
            return vendor
    return _PROVIDERS.get((provider or "").strip().lower())


def routed(choice: ModelChoice) -> ModelChoice:
    """`choice` with the provider of its model's vendor (the model name as the vendor's
    API takes it: a router's prefix dropped); unchanged when no vendor is known."""
    vendor = vendor_of(choice.provider, choice.model)
    if vendor is None or (vendor == choice.provider and "/" not in choice.model):
        return choice
    model = choice.model.rsplit("/", 1)[-1] if vendor_of(None, choice.model) else choice.model
    return ModelChoice(vendor, model, choice.reasoning)
