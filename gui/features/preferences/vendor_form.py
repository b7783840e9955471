"""One vendor's page in Preferences: where its key comes from (never the key), a field to
type a new one, a button that forgets the stored one, its base URL, and its default model
— picked from the list the vendor's endpoint gives (asked on the host, off the GUI thread)
or typed when it gives none."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from forkwise.core.client.settings_values import VendorState
from forkwise.core.errors import ForkwiseError
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.error_text import describe

#: each vendor's default endpoint, shown as the base URL field's placeholder
DEFAULT_URLS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com",
    "compatible": "http://localhost:11434/v1 or https://api.example.com/v1",
}
KEY_ORIGINS = {"env": "key set in the environment", "keyring": "key in the system keyring"}


def vendor_line(state: VendorState, compatible: bool = False) -> str:
    """One vendor's state in words: its key's origin (never the key), base URL, model (a
    vendor's default is the forked session's own; the compatible endpoint has none)."""
    key = KEY_ORIGINS.get(state["key"] or "", "no key")
    if state["key"] == "env" and state["keyNote"]:
        key = f"key set in the environment ({state['keyNote']})"
    model = state["model"] or ("none set" if compatible else "its session's model")
    ready = "configured" if state["configured"] else "not configured"
    words = [ready, key, state["baseUrl"], f"default model: {model}"]
    return " · ".join(w for w in words if w)


class VendorForm(QWidget):
    """The fields of one vendor (`anthropic`, `openai`, `gemini` or `compatible`)."""

    def __init__(self, name: str, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.controller = controller
        self.setObjectName(f"{name}Form")
        self.state = QLabel("…", self)
        self.state.setObjectName(f"vendor{name.capitalize()}")
        self.state.setWordWrap(True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key = QLineEdit(self)
        self.key.setObjectName(f"{name}Key")
        self.key.setAccessibleName("API key")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("type a key to keep it in the system keyring")
        self.clear_key = QPushButton("&Forget stored key", self)
        self.clear_key.setObjectName(f"{name}ClearKey")
        self.clear_key.clicked.connect(self._forget_key)
        self.base_url = QLineEdit(self)
        self.base_url.setObjectName(f"{name}BaseUrl")
        self.base_url.setAccessibleName("Base URL")
        self.base_url.setPlaceholderText(DEFAULT_URLS[name])
        self.model = QComboBox(self)
        self.model.setObjectName(f"{name}Model")
        self.model.setAccessibleName("Default model")
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setMinimumContentsLength(28)
        #: the model field's text box (an editable combo box always has one)
        self.model_text = self.model.lineEdit() or QLineEdit(self)
        self.model_text.setPlaceholderText("type a model name, or list the endpoint's")
        self.list_button = QPushButton("&List models", self)
        self.list_button.setObjectName(f"{name}ListModels")
        self.list_button.clicked.connect(self.list_models)
        self.models_note = QLabel("", self)
        self.models_note.setObjectName(f"{name}ModelsNote")
        self.models_note.setWordWrap(True)
        # room for a failure's few sentences: the dialog does not grow when they come
        self.models_note.setMinimumHeight(self.fontMetrics().lineSpacing() * 4)
        self.models_note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        key_row.addWidget(self.clear_key)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.list_button)
        self.rows = QFormLayout(self)
        self.rows.addRow("State:", self.state)
        self.rows.addRow(self._label("API &key:", self.key), key_row)
        self.rows.addRow("&Base URL:", self.base_url)
        self.rows.addRow(self._label("&Model:", self.model), model_row)
        self.rows.addRow("", self.models_note)
        #: what the host said last: the fields are saved only when changed from it
        self.loaded: tuple[str, str] = ("", "")

    def _label(self, text: str, buddy: QWidget) -> QLabel:
        """A row label whose mnemonic reaches `buddy` (a row that is a layout has none)."""
        label = QLabel(text, self)
        label.setBuddy(buddy)
        return label

    # --- filling and reading ----------------------------------------------------------

    def fill(self, state: VendorState) -> None:
        """Show the host's state of this vendor, and what was saved in the fields."""
        self.state.setText(vendor_line(state, self.name == "compatible"))
        self.base_url.setText(state["savedBaseUrl"])
        self.model.setEditText(state["model"])
        self.key.clear()
        self.loaded = (state["savedBaseUrl"], state["model"])
        self.clear_key.setEnabled(state["key"] == "keyring")

    def values(self) -> dict[str, str]:
        return {"base_url": self.base_url.text().strip(), "model": self.model.currentText().strip()}

    def changed(self) -> bool:
        values = self.values()
        return bool(self.key.text().strip()) or (values["base_url"], values["model"]) != self.loaded

    # --- asking the host --------------------------------------------------------------

    def list_models(self) -> None:
        """Ask the host for the endpoint's models (its SDK's call, at the URL and with the
        key typed here, else the saved ones); on failure say why and keep free text."""
        where = self.base_url.text().strip() or DEFAULT_URLS[self.name]
        self.list_button.setEnabled(False)
        self.models_note.setText(f"Asking {where} for its models…")
        call = self.controller.client.list_vendor_models(
            self.name, self.base_url.text().strip(), self.key.text().strip()
        )
        self.controller.ops.run(call, self._listed, self._not_listed, what="Listing models")

    def _listed(self, names: list[str]) -> None:
        self.list_button.setEnabled(True)
        typed = self.model.currentText()
        self.model.clear()
        self.model.addItems(names)
        self.model.setEditText(typed or (names[0] if names else ""))
        self.models_note.setText(
            f"{len(names)} models offered; pick one or type another name."
            if names else "The endpoint offered no models; type the model's name."
        )

    def _not_listed(self, exc: BaseException) -> None:
        self.list_button.setEnabled(True)
        said = (exc.message if isinstance(exc, ForkwiseError) else describe(exc)).rstrip()
        said += "" if said.endswith((".", "!", "?")) else "."
        self.models_note.setText(
            f"Could not list the models. {said} Type the model's name instead."
        )

    def _forget_key(self) -> None:
        def forgot(cleared: bool) -> None:
            self.clear_key.setEnabled(False)
            self.state.setText(
                "The stored key was forgotten." if cleared else "The keyring held no key."
            )

        self.controller.ops.run(
            self.controller.client.clear_vendor_key(self.name), forgot, what="Forgetting the key"
        )
