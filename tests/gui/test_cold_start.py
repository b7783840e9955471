"""Start-up order: the window paints a loading state first, then the store opens and the
tree fills; a store that cannot be opened still ends the app with a message and exit 1."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gui_harness import until
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from forkwise.core.demo import build_demo_store
from forkwise.gui import app as app_module
from forkwise.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


def shown_window() -> MainWindow | None:
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow) and widget.isVisible():
            return widget
    return None


def test_window_paints_loading_before_the_store_then_shows_rows(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    real_open = app_module.open_store_client
    asked = asyncio.Event()
    release = asyncio.Event()

    async def held_open(*args: Any, **kwargs: Any) -> Any:
        asked.set()
        await release.wait()
        return await real_open(*args, **kwargs)

    monkeypatch.setattr(app_module, "open_store_client", held_open)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> int:
        session = asyncio.ensure_future(
            app_module._session(qapp, store, None, None, settings=settings))
        await asyncio.wait_for(asked.wait(), 15)
        window = shown_window()
        assert window is not None, "the window is shown before the store is opened"
        tree = window.tree
        assert tree.placeholder.isVisible()
        assert tree.placeholder.text() == "Loading sessions…"
        assert tree.model().rowCount() == 0
        assert not window.action_new.isEnabled()  # it needs the client
        image = window.grab().toImage()  # paints without the store
        assert not image.isNull()
        assert image.width() > 0
        assert str(store) in window.windowTitle()

        release.set()
        await until(lambda: tree.model().rowCount() > 0, what="rows in the tree")
        await until(lambda: window.controller.current is not None, what="a session opened")
        assert not tree.placeholder.isVisible()
        assert window.action_new.isEnabled()
        assert tree.currentIndex().isValid()  # the newest session is selected and open
        assert window.selected_session() == window.controller.current
        await window.controller.ops.wait_idle()
        window.close()
        return await asyncio.wait_for(session, 15)

    assert aloop(scenario()) == 0
    assert not (store / "host.sock").exists()  # the host was closed


def test_a_store_that_cannot_be_opened_closes_the_window_and_returns_1(
        aloop: Any, qapp: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("not a store")
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> int:
        return await app_module._session(qapp, not_a_dir, None, None, settings=settings)

    assert aloop(scenario()) == 1
    assert shown_window() is None
    err = capsys.readouterr().err
    assert err.startswith("forkwise: ")
    assert str(not_a_dir) in err


def test_the_app_on_a_store_that_cannot_be_opened_exits_1(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("not a store")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    code = "import sys; from forkwise.gui.launcher import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, "--store", str(not_a_dir)], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert "forkwise: " in result.stderr
    assert str(not_a_dir) in result.stderr
    assert "Traceback" not in result.stderr
