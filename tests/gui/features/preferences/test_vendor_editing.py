"""Preferences edit each vendor: a typed key goes to the keyring (never shown back, only
where it comes from), the base URL and default model to the settings file, the model list
comes from the vendor's SDK asking the endpoint — here stand-ins on 127.0.0.1 speaking
Anthropic's and Gemini's wire formats — and a failed listing says why and leaves the model
to be typed."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from gui_harness import open_app, until
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit

from forkwise.core.runtime.settings import KEYRING_SERVICE, load_vendor_settings
from forkwise.gui.features.preferences.settings_dialog import SettingsDialog

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "providers"))
from fake_endpoint import Server
from memory_keyring import MemoryKeyring, install
from vendor_streams import claude_error, claude_models, gemini_models

pytestmark = pytest.mark.gui

KEY = "sk-ant-api03-Zq7Xw2Lm9Rt4Vb8Nc1Hd6Jf3Kp0Gs5Ye"
SHOTS = os.environ.get("FORKWISE_SHOTS", "")
AMBIENT = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
           "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
           "FORKWISE_API_KEY")


@pytest.fixture
def keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryKeyring:
    """A config folder of the test's own, no vendor variables, an in-memory keyring."""
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    for name in AMBIENT:
        monkeypatch.delenv(name, raising=False)
    return install(monkeypatch)


@asynccontextmanager
async def app_and_stand_in(tmp_path: Path) -> AsyncIterator[tuple[Any, Server, str]]:
    """The app, and a stand-in server on 127.0.0.1 with its root URL."""
    server = Server()
    await server.start()
    try:
        async with open_app(tmp_path) as app:
            yield app, server, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


async def opened_dialog(app: Any) -> SettingsDialog:
    app.window.action("actionPreferences").trigger()
    dialog: SettingsDialog = await until(
        lambda: next((w for w in QApplication.topLevelWidgets()
                      if isinstance(w, SettingsDialog) and w.isVisible()), None),
        what="preferences")
    await until(lambda: dialog.vendors["anthropic"].text() != "…", what="vendors filled")
    await app.idle()
    return dialog


def shown_texts(dialog: SettingsDialog) -> list[str]:
    texts = [w.text() for w in dialog.findChildren(QLabel)]
    return texts + [w.text() + w.placeholderText() for w in dialog.findChildren(QLineEdit)]


def test_a_claude_key_base_url_and_listed_model_are_saved_and_the_key_never_shown(
    aloop: Any, tmp_path: Path, keyring: MemoryKeyring
) -> None:
    async def scenario() -> None:
        async with app_and_stand_in(tmp_path) as (app, server, url):
            dialog = await opened_dialog(app)
            claude = dialog.forms["anthropic"]
            assert "not configured" in claude.state.text()
            dialog.tabs.setCurrentWidget(claude)
            claude.key.setText(KEY)
            claude.base_url.setText(url)
            server.respond(200, claude_models("claude-sonnet-4-5-20250929",
                                              "claude-opus-4-1-20250805",
                                              "claude-haiku-4-5-20251001"))
            claude.list_button.click()
            await until(lambda: claude.model.count() == 3, what="models listed")
            (request,) = server.requests
            assert request.path.split("?")[0] == "/v1/models"
            assert KEY in (request.headers.get("x-api-key"),
                           request.headers.get("authorization", "")[7:])
            assert "3 models offered" in claude.models_note.text()
            claude.model.setCurrentIndex(claude.model.findText("claude-opus-4-1-20250805"))
            dialog.save()
            await until(lambda: not dialog.isVisible(), what="dialog closed")
            assert keyring.entries == {(KEYRING_SERVICE, url): KEY}
            saved = load_vendor_settings()["anthropic"]
            assert (saved.base_url, saved.model) == (url, "claude-opus-4-1-20250805")
            assert KEY.encode() not in (tmp_path / "config" / "settings.json").read_bytes()
            served = {m["provider"]: m for m in await app.client.models()}
            assert served["anthropic"]["default"] == "claude-opus-4-1-20250805"

            # opened again: where the key comes from, never the key
            dialog = await opened_dialog(app)
            claude = dialog.forms["anthropic"]
            assert claude.state.text().startswith("configured · key in the system keyring")
            assert claude.base_url.text() == url
            assert claude.model.currentText() == "claude-opus-4-1-20250805"
            assert claude.key.text() == ""
            assert not [t for t in shown_texts(dialog) if KEY in t or KEY[:16] in t]
            # listed again with the stored key (none typed now)
            server.respond(200, claude_models("claude-sonnet-4-5-20250929",
                                              "claude-opus-4-1-20250805"))
            claude.list_button.click()
            await until(lambda: claude.model.count() == 2, what="listed with stored key")
            assert KEY in (server.requests[-1].headers.get("x-api-key"),
                           server.requests[-1].headers.get("authorization", "")[7:])
            assert claude.model.currentText() == "claude-opus-4-1-20250805"
            if SHOTS:
                dialog.grab().save(str(Path(SHOTS) / "preferences-vendors.png"))
            # forgotten: the keyring no longer holds it
            claude.clear_key.click()
            await until(lambda: not keyring.entries, what="key forgotten")
            await until(lambda: "forgotten" in claude.state.text(), what="said so")
            dialog.close()

    aloop(scenario())


@pytest.mark.usefixtures("keyring")
def test_a_failed_listing_says_why_and_the_model_can_be_typed(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with app_and_stand_in(tmp_path) as (app, server, url):
            dialog = await opened_dialog(app)
            claude = dialog.forms["anthropic"]
            claude.key.setText(KEY)
            claude.base_url.setText(url)
            server.respond(401, claude_error("authentication_error", f"invalid key {KEY}"))
            claude.list_button.click()
            await until(lambda: "instead" in claude.models_note.text(), what="failure said")
            note = claude.models_note.text()
            assert "Anthropic" in note, note
            assert "key" in note.lower(), note
            assert KEY not in note
            assert claude.list_button.isEnabled()
            assert claude.model.isEditable()
            if SHOTS:
                dialog.grab().save(str(Path(SHOTS) / "preferences-listing-failed.png"))
                dialog.tabs.setCurrentWidget(dialog.forms["compatible"])
                dialog.grab().save(str(Path(SHOTS) / "preferences-compatible.png"))
                dialog.tabs.setCurrentWidget(claude)

            gemini = dialog.forms["gemini"]
            gemini.base_url.setText(url)
            gemini.key.setText("gemini-typed-0123456789")
            server.respond(200, gemini_models(("gemini-2.5-pro", ["generateContent"]),
                                              ("text-embedding-004", ["embedContent"])))
            gemini.list_button.click()
            await until(lambda: gemini.model.count() == 1, what="gemini listed")
            assert gemini.model.itemText(0) == "gemini-2.5-pro"

            claude.model.setEditText("claude-typed-by-hand")
            dialog.save()
            await until(lambda: not dialog.isVisible(), what="dialog closed")
            saved = orjson.loads((tmp_path / "config" / "settings.json").read_bytes())
            assert saved["vendors"]["anthropic"]["model"] == "claude-typed-by-hand"
            assert saved["vendors"]["gemini"] == {"base_url": url, "model": "gemini-2.5-pro"}
            assert "openai" not in saved["vendors"]  # untouched: nothing written for it

    aloop(scenario())
