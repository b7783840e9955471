"""`forkwise` as a person starts it: self-test, demo, no display; window state; settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from forkwise.gui.app.app import has_display

pytestmark = pytest.mark.gui


def forkwise(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import sys; from forkwise.gui.app.launcher import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_self_test_on_a_demo_store(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    store = tmp_path / "store"
    result = forkwise("--demo", "--store", str(store), "--self-test", env=env)
    assert result.returncode == 0, result.stderr
    assert "self-test ok: 6 sessions" in result.stdout
    assert len(list((store / "sessions").glob("*.jsonl"))) == 6
    # the same store again: nothing added, still loads
    again = forkwise("--store", str(store), "--self-test", env=env)
    assert again.returncode == 0, again.stderr
    assert "self-test ok: 6 sessions" in again.stdout
    bad = [line for line in (result.stderr + again.stderr).splitlines()
           if "Traceback" in line or " ERROR " in line]
    assert bad == []
    # an offscreen self-test leaves no window geometry for the next real start
    saved = list((tmp_path / "cfg").rglob("*.conf"))
    assert all("geometry" not in f.read_text() for f in saved), saved


def test_the_process_ends_without_the_interpreters_teardown(tmp_path: Path) -> None:
    """Once the window's run is over (store closed, settings synced), the process ends
    at once: what it printed is written, but nothing of the interpreter's teardown runs
    (an `atexit` handler stands for it here), which took 0.2 s and more of a quit."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    code = ("import atexit, sys; atexit.register(print, 'teardown ran'); "
            "from forkwise.gui.app.launcher import main; sys.exit(main(sys.argv[1:]))")
    args = ["--demo", "--store", str(tmp_path / "store"), "--self-test"]
    result = subprocess.run([sys.executable, "-c", code, *args], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "self-test ok: 6 sessions" in result.stdout
    assert "teardown ran" not in result.stdout
    assert len(list((tmp_path / "store" / "sessions").glob("*.jsonl"))) == 6


def test_throwaway_demo_store_is_removed_after_the_run(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    result = forkwise("--demo", "--self-test", env=env)
    assert result.returncode == 0, result.stderr
    assert "self-test ok: 6 sessions" in result.stdout
    assert list((tmp_path / "tmp").iterdir()) == []


def test_no_display_says_so_instead_of_aborting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = forkwise("--store", str(tmp_path / "s"), env=env)
    assert result.returncode == 1
    assert "no display found" in result.stderr
    assert "forkwise sessions --help" in result.stderr
    assert not has_display({})
    assert has_display({"QT_QPA_PLATFORM": "offscreen"})


def test_window_state_persists_and_names_are_stable(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            for name in ("sessionTree", "transcript", "composer"):
                widget = w.findChild(QWidget, name)
                assert widget is not None, name
                assert widget.accessibleName(), name
            for name in ("actionNewSession", "actionForkSession", "actionFind", "actionQuit",
                         "actionPreferences"):
                found = [a for a in w.actions() if a.objectName() == name]
                assert found, name
                assert not found[0].shortcut().isEmpty(), name
            for widget in w.findChildren(QWidget):
                if widget.isVisible() and widget.focusPolicy() != widget.focusPolicy().NoFocus \
                        and widget.metaObject().className() in ("QLineEdit", "QPushButton",
                                                                 "QPlainTextEdit", "QTreeView"):
                    assert widget.accessibleName() or widget.objectName().startswith("qt_"), widget
            w.splitter.moveSplitter(300, 1)  # the person drags the handle: kept
            sizes = w.splitter.sizes()
            w.save_state()
        settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
        assert settings.value("window/splitter") is not None
        async with open_app(tmp_path / "again", demo=True) as app2:
            app2.window.settings = settings
            app2.window._restore()
            assert app2.window.splitter.sizes()[0] == sizes[0]

    aloop(scenario())


def test_settings_dialog_opens_without_blocking_and_saves(aloop: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            app.window.action_prefs.trigger()  # open(), never exec(): we get control back
            dialog = app.window.features["preferences"].dialog
            assert dialog is not None
            await until(dialog.isVisible)
            await app.idle()
            assert dialog.kind.currentData() == "offline"
            assert not dialog.base_url.isEnabled()
            dialog.kind.setCurrentIndex(dialog.kind.findData("openai"))
            assert dialog.base_url.isEnabled()
            dialog.base_url.setText("http://127.0.0.1:9/v1")
            dialog.model.setText("tiny-model")
            dialog.effort.setCurrentIndex(dialog.effort.findData("low"))
            dialog.save()
            await until(lambda: not dialog.isVisible(), what="dialog closed")
            from forkwise.core.runtime.settings import load_settings
            saved = load_settings()
            assert (saved.kind, saved.base_url, saved.model, saved.reasoning_effort) == (
                "openai", "http://127.0.0.1:9/v1", "tiny-model", "low")
            assert "Preferences saved" in app.notifier.history[-1].text

    aloop(scenario())
