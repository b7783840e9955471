"""Session → Use the model from Preferences: the open session's next turns use it, and its
log records the choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

from forkwise.core.runtime.settings import CONFIG_ENV, ProviderSettings, save_settings

pytestmark = pytest.mark.gui


def test_switch_the_open_session_to_the_configured_model(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "config"))
    monkeypatch.delenv("FORKWISE_API_KEY", raising=False)
    save_settings(ProviderSettings(kind="openai", base_url="http://127.0.0.1:9/v1", model="m-9",
                                   reasoning_effort="low"))

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            sid = app.sid("Quick question about tabs vs spaces")
            await app.open(sid)
            action = app.window.action_use_model
            assert action.isEnabled()
            action.trigger()
            await until(lambda: (app.controller.tree.summary(sid) or {}).get("model") == "m-9",
                        what="the row names the new model")
            last = app.log(sid)[-1]
            assert (last["type"], last["provider"], last["model"], last["reasoning"]) == (
                "model/select", "openai", "m-9", "low")
            await until(lambda: any("now uses m-9" in n.text for n in app.notifier.history),
                        what="the person is told")
            assert app.notifier.errors() == []

    aloop(scenario())
