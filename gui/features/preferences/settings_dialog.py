"""Preferences: which model answers new turns (offline by default, or an OpenAI-compatible
endpoint) and each vendor's key, base URL and default model. Opened with `open()`, never
`exec()`; reads, writes and model listings happen on the host, off the GUI thread, because
the keyring may block and an endpoint may be slow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from forkwise.core.client.settings_values import host_settings
from forkwise.gui.features.preferences.vendor_form import VendorForm
from forkwise.gui.kernel.controller import Controller

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench

EFFORTS = ("", "low", "medium", "high")
#: the vendors whose SDKs answer, as Preferences names them (tab order)
VENDOR_NAMES = {
    "anthropic": "Claude",
    "openai": "OpenAI",
    "gemini": "Gemini",
    "compatible": "Compatible endpoint",
}


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
        #: one page per vendor, the compatible endpoint last
        self.forms: dict[str, VendorForm] = {}
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("vendorTabs")
        for name, title in VENDOR_NAMES.items():
            form = VendorForm(name, controller, self.tabs)
            self.forms[name] = form
            self.tabs.addTab(form, title)
        #: each vendor's state line, by vendor (the compatible endpoint's is its key)
        self.vendors = {name: form.state for name, form in self.forms.items()}
        compatible = self.forms["compatible"]
        self.base_url = compatible.base_url
        self.base_url.setObjectName("baseUrl")
        self.model = compatible.model_text
        self.model.setObjectName("modelName")
        self.api_key = compatible.key
        self.api_key.setObjectName("apiKey")
        self.effort = QComboBox(self)
        self.effort.setObjectName("reasoningEffort")
        self.effort.setAccessibleName("Reasoning effort")
        for value in EFFORTS:
            self.effort.addItem(value or "default", value)
        compatible.rows.addRow("&Reasoning effort:", self.effort)
        self.note = QLabel(self)
        self.note.setObjectName("settingsNote")
        self.note.setWordWrap(True)
        offline = QLabel(
            "The offline model is built in and always available (no key, no network). A "
            "fork continues on its session's model when that vendor has a key.", self)
        offline.setObjectName("vendorOffline")
        offline.setWordWrap(True)
        top = QFormLayout()
        top.addRow("New sessions &use:", self.kind)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tabs)
        layout.addWidget(offline)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed()
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 90)

    def _kind_changed(self, *_args: Any) -> None:
        remote = self.kind.currentData() == "openai"
        compatible = self.forms["compatible"]
        for widget in (compatible.base_url, compatible.model, compatible.key, self.effort,
                       compatible.list_button):
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

    def _fill(self, answer: dict[str, Any]) -> None:
        settings = host_settings(answer)
        index = self.kind.findData(settings["kind"])
        self.kind.setCurrentIndex(max(index, 0))
        effort = self.effort.findData(settings["reasoning_effort"] or "")
        self.effort.setCurrentIndex(max(effort, 0))
        for name, state in settings["vendors"].items():
            form = self.forms.get(name)
            if form is not None:
                form.fill(state)
        self.forms["compatible"].fill(settings["compatible"])
        self._kind_changed()

    def values(self) -> dict[str, Any]:
        return {
            "kind": self.kind.currentData(),
            "base_url": self.base_url.text().strip(),
            "model": self.model.text().strip(),
            "reasoning_effort": self.effort.currentData() or None,
        }

    def save(self) -> None:
        """Save each vendor that was changed, then the provider settings, on the host."""
        values, key = self.values(), self.api_key.text()
        client = self.controller.client
        vendors = [(name, form.values(), form.key.text().strip())
                   for name, form in self.forms.items()
                   if name != "compatible" and form.changed()]

        async def save_and_apply() -> Any:
            for name, fields, typed in vendors:
                await client.save_vendor(name, fields, typed)
            return await client.save_settings(values, key)

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
