"""Preferences: which model answers new turns (offline by default, or an OpenAI-compatible
endpoint). Opened with `open()`, never `exec()`; reads and writes happen off the GUI
thread because the keyring may block."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from forkwise.gui.kernel.controller import Controller

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench

EFFORTS = ("", "low", "medium", "high")
#: the vendors whose SDKs answer, as Preferences names them
VENDOR_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI / compatible", "gemini": "Gemini"}


def vendor_line(state: dict[str, Any]) -> str:
    """One vendor's state in words: its key's origin (never the key), base URL, model."""
    key = {"env": "key set in the environment", "keyring": "key in the system keyring"}.get(
        str(state.get("key")), "no key")
    note = str(state.get("keyNote") or "")
    if state.get("key") == "env" and note:
        key = f"key set in the environment ({note})"
    model = state.get("model") or "its session's model"
    ready = "configured" if state.get("configured") else "not configured"
    return f"{ready} · {key} · {state.get('baseUrl') or ''} · default model: {model}"


class SettingsDialog(QDialog):
    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Forkwise preferences")
        self.setAccessibleName("Preferences")
        self.kind = QComboBox(self)
        self.kind.setObjectName("providerKind")
        self.kind.setAccessibleName("Provider")
        self.kind.addItem("Offline demo model (built in, no network)", "offline")
        self.kind.addItem("OpenAI-compatible endpoint", "openai")
        self.base_url = QLineEdit(self)
        self.base_url.setObjectName("baseUrl")
        self.base_url.setAccessibleName("Base URL")
        self.base_url.setPlaceholderText("http://localhost:11434/v1 or https://api.example.com/v1")
        self.model = QLineEdit(self)
        self.model.setObjectName("modelName")
        self.model.setAccessibleName("Model")
        self.model.setPlaceholderText("e.g. llama3.1 or gpt-4o-mini")
        self.api_key = QLineEdit(self)
        self.api_key.setObjectName("apiKey")
        self.api_key.setAccessibleName("API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("kept in the system keyring, never in a file")
        self.effort = QComboBox(self)
        self.effort.setObjectName("reasoningEffort")
        self.effort.setAccessibleName("Reasoning effort")
        for value in EFFORTS:
            self.effort.addItem(value or "default", value)
        self.note = QLabel(self)
        self.note.setObjectName("settingsNote")
        self.note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("&Provider:", self.kind)
        form.addRow("&Base URL:", self.base_url)
        form.addRow("&Model:", self.model)
        form.addRow("API &key:", self.api_key)
        form.addRow("&Reasoning effort:", self.effort)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        #: each vendor's state as the host reaches it (filled by `_fill`)
        self.vendors: dict[str, QLabel] = {}
        vendors = QGroupBox("Vendors (keys from their SDK's variables or the keyring)", self)
        vendors.setObjectName("vendorsBox")
        vendor_form = QFormLayout(vendors)
        for name, title in VENDOR_NAMES.items():
            label = QLabel("…", vendors)
            label.setObjectName(f"vendor{name.capitalize()}")
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            vendor_form.addRow(f"{title}:", label)
            self.vendors[name] = label
        offline = QLabel("built in, always available (no key, no network)", vendors)
        offline.setObjectName("vendorOffline")
        vendor_form.addRow("Offline:", offline)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(vendors)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed()

    def _kind_changed(self, *_args: Any) -> None:
        remote = self.kind.currentData() == "openai"
        for widget in (self.base_url, self.model, self.api_key, self.effort):
            widget.setEnabled(remote)
        self.note.setText(
            "New turns are answered by an OpenAI-compatible endpoint."
            if remote else "The offline model needs no network and always answers the same way."
        )

    def load(self) -> None:
        """The host's settings (the host owns the settings file and the keyring, also
        when it runs on another machine)."""
        self.controller.ops.run(
            self.controller.client.settings(), self._fill, what="Reading preferences"
        )

    def _fill(self, settings: dict[str, Any]) -> None:
        index = self.kind.findData(settings.get("kind"))
        self.kind.setCurrentIndex(max(index, 0))
        self.base_url.setText(settings.get("base_url") or "")
        self.model.setText(settings.get("model") or "")
        effort = settings.get("reasoning_effort") or ""
        self.effort.setCurrentIndex(max(self.effort.findData(effort), 0))
        for name, state in (settings.get("vendors") or {}).items():
            label = self.vendors.get(name)
            if label is not None:
                label.setText(vendor_line(state))
        self.api_key.clear()
        if settings.get("key"):
            self.api_key.setPlaceholderText(f"API key: {settings['key']}")

    def values(self) -> dict[str, Any]:
        return {
            "kind": self.kind.currentData(),
            "base_url": self.base_url.text().strip(),
            "model": self.model.text().strip(),
            "reasoning_effort": self.effort.currentData() or None,
        }

    def save(self) -> None:
        values, key = self.values(), self.api_key.text()

        async def save_and_apply() -> Any:
            return await self.controller.client.save_settings(values, key)

        def applied(choice: Any) -> None:
            self.controller.notifier.info(
                f"Preferences saved: new sessions use {choice['model']} ({choice['provider']}); "
                "a session keeps the model it started with."
            )
            self.accept()

        self.controller.ops.run(save_and_apply(), applied, what="Saving preferences")


class Preferences:
    """File → Preferences…: the window's one dialog, loaded afresh each time it opens."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.dialog: SettingsDialog | None = None

    def open(self) -> None:
        if self.dialog is None:
            self.dialog = SettingsDialog(self.bench.controller, self.bench.widget())
        self.dialog.load()
        self.dialog.open()


def install(bench: Bench) -> Preferences:
    """The window's Preferences action (in its tool bar and File menu) opens the dialog."""
    preferences = Preferences(bench)
    bench.action(PREFERENCES).triggered.connect(preferences.open)
    return preferences


#: the window's action this feature answers (gui/shell/main_window makes it)
PREFERENCES = "actionPreferences"
