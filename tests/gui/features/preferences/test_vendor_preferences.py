"""Preferences name each vendor's state as the host reaches it: where its key comes from
(the environment, the keyring, none — never the key), its base URL and default model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit

from forkwise.gui.features.preferences.settings_dialog import SettingsDialog

pytestmark = pytest.mark.gui

SECRET = "sk-ant-test-0123456789-secret"
SHOTS = os.environ.get("FORKWISE_SHOTS", "")


def test_preferences_say_where_each_vendors_key_comes_from_and_never_show_it(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                 "GOOGLE_GEMINI_BASE_URL", "FORKWISE_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            app.window.action("actionPreferences").trigger()
            dialog = await until(lambda: next((w for w in QApplication.topLevelWidgets()
                                               if isinstance(w, SettingsDialog)
                                               and w.isVisible()), None), what="preferences")
            anthropic = dialog.findChild(QLabel, "vendorAnthropic")
            await until(lambda: anthropic.text() != "…", what="vendors filled")
            text = anthropic.text()
            assert text.startswith("configured · key set in the environment"), text
            assert "$ANTHROPIC_API_KEY" in text
            assert "http://127.0.0.1:9/anthropic" in text
            openai = dialog.findChild(QLabel, "vendorOpenai").text()
            assert openai.startswith("not configured · no key"), openai
            assert "https://api.openai.com/v1" in openai
            assert "no key" in dialog.findChild(QLabel, "vendorGemini").text()
            assert dialog.findChild(QLabel, "vendorOffline") is not None
            # the key itself is nowhere in the dialog
            shown = [w.text() for w in dialog.findChildren(QLabel)]
            shown += [w.text() + w.placeholderText() for w in dialog.findChildren(QLineEdit)]
            assert not [t for t in shown if SECRET in t]
            if SHOTS:
                dialog.grab().save(str(Path(SHOTS) / "preferences-vendors.png"))
            dialog.close()

    aloop(scenario())
