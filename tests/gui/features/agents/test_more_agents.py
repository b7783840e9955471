"""Gemini CLI and OpenCode in the app: their sessions, found in their default folders on
first start, carry their tool's tile and name; Continue in ▸ lists both and writes a
session back with the command that resumes it; Agent sources… lists both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gemini_fixtures import SID, coding_session, settled
from gui_harness import open_app, until
from opencode_fixtures import OpenCodeDb
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit

from forkwise.gui.features.agents.continue_in import ContinueDialog
from forkwise.gui.features.agents.import_dialogs import SourcesDialog
from forkwise.gui.models.session_rows import TITLE
from forkwise.gui.widgets.source_badges import source_icon

pytestmark = pytest.mark.gui


def dialog_of(kind: type) -> Any:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
    return found[-1] if found else None


def home(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A home with one Gemini CLI session and an OpenCode database of one session; their
    ids in the store."""
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(root / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "data"))
    settled(coding_session().write(root / "home" / ".gemini"))
    db = OpenCodeDb(root / "data" / "opencode" / "opencode.db")
    sid = db.session("Fix the parser")
    db.exchange(sid, "Why does the parser fail?", "A missing colon.")
    db.close()
    return f"gemini-{SID}", f"opencode-{sid}"


def image(icon: Any) -> Any:
    return icon.pixmap(16, 16).toImage()


def test_gemini_cli_and_opencode_sessions_show_their_tool_and_continue_there(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini, opencode = home(tmp_path, monkeypatch)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            tree = app.controller.tree
            await until(lambda: gemini in tree.session_ids()
                        and any(s.startswith(opencode) for s in tree.session_ids()),
                        what="watched")
            opencode_id = next(s for s in tree.session_ids() if s.startswith(opencode))
            for sid, tool, name in ((gemini, "gemini", "Gemini CLI"),
                                    (opencode_id, "opencode", "OpenCode")):
                index = tree.index_for(sid)
                icon = tree.data(index, Qt.ItemDataRole.DecorationRole)
                assert image(icon) == image(source_icon(tool))
                assert image(icon) != image(source_icon("codex"))
                tip = tree.data(index.siblingAtColumn(TITLE), Qt.ItemDataRole.ToolTipRole)
                assert f"Imported from {name}" in tip
            await app.open(gemini)
            menu = app.window.findChild(type(app.window.menuBar().actions()[0].menu()),
                                        "menuContinueIn")
            menu.aboutToShow.emit()
            names = {a.objectName(): a for a in menu.actions()}
            assert {"actionContinueGemini", "actionContinueOpencode"} <= set(names)
            assert "where it came from" in names["actionContinueGemini"].text()
            names["actionContinueGemini"].trigger()
            dialog = await until(lambda: dialog_of(ContinueDialog), what="continue dialog")
            command = dialog.findChild(QLineEdit, "resumeCommand").text()
            assert "gemini --resume " in command, command
            dialog.close()
            app.window.findChild(type(app.window.action_new), "actionSources").trigger()
            sources = await until(lambda: dialog_of(SourcesDialog), what="sources dialog")
            await until(sources.boxes["opencode"].isEnabled, what="sources listed")
            assert "Gemini CLI" in sources.boxes["gemini"].text()
            assert "OpenCode" in sources.boxes["opencode"].text()
            assert sources.boxes["gemini"].isChecked()  # found: watched by default
            sources.close()

    aloop(scenario())
