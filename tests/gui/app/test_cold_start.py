"""Start-up order: the window paints a loading state first, then the store opens and the
tree fills; a store that cannot be opened is said in a dialog (and on stderr), then the
app ends with exit 1."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gui_harness import until
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from forkwise.core.bench.synth import write_store
from forkwise.core.demo import build_demo_store
from forkwise.core.store.backends.index_head import read_head
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionSummary
from forkwise.core.store.session_store import SessionStore
from forkwise.gui.app import app as app_module
from forkwise.gui.models.session_rows import TITLE
from forkwise.gui.shell.main_window import MainWindow

pytestmark = pytest.mark.gui


def shown_window() -> MainWindow | None:
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow) and widget.isVisible():
            return widget
    return None


def hold_store_open(monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the app's store opening back: `asked` is set once the app asks for it, and
    it goes on when the test sets `release`."""
    real_open = app_module.open_client
    asked, release = asyncio.Event(), asyncio.Event()

    async def held_open(*args: Any, **kwargs: Any) -> Any:
        asked.set()
        await release.wait()
        return await real_open(*args, **kwargs)

    monkeypatch.setattr(app_module, "open_client", held_open)
    return asked, release


async def start_held(
        qapp: Any, store: Path, settings: QSettings, asked: asyncio.Event
) -> tuple[asyncio.Future[int], MainWindow]:
    """Start the app on `store` and wait until it asks for the store (held back by
    `hold_store_open`): the window it shows meanwhile, and the app's run."""
    session = asyncio.ensure_future(
        app_module._session(qapp, store, None, None, settings=settings))
    await asyncio.wait_for(asked.wait(), 15)
    window = shown_window()
    assert window is not None, "the window is shown before the store is opened"
    return session, window


def test_window_paints_loading_before_the_store_then_shows_rows(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    build_demo_store(store)
    (store / "index.json").unlink()  # no index: nothing to show before the store is open
    asked, release = hold_store_open(monkeypatch)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> int:
        session, window = await start_held(qapp, store, settings, asked)
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
    # the index as the host left it, its first page apart for the next start (index_head)
    assert read_head(store / "index.json", 1) is not None


def test_rows_from_the_index_show_before_the_store_opens_then_the_listing_takes_over(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an index, the tree shows the rows it vouches for while the host opens; nothing
    opens and no action that needs the client is enabled until the listing is in, which
    adds what the index did not vouch for and opens the row chosen meanwhile."""
    store = tmp_path / "store"
    build_demo_store(store)
    sources = {s.parent_session for s in listed(store)}
    logs = sorted((store / "sessions").glob("*.jsonl"))
    changed = next(p for p in logs if p.stem not in sources)  # changed behind the index
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    everyone = {p.stem for p in logs}
    asked, release = hold_store_open(monkeypatch)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> tuple[int, str]:
        session, window = await start_held(qapp, store, settings, asked)
        c, tree = window.controller, window.tree
        assert set(c.tree.session_ids()) == everyone - {changed.stem}
        assert tree.model().rowCount() > 0
        assert not tree.placeholder.isVisible()
        assert c.previewed
        assert not c.loaded
        assert c.tree.lineage_parents(), "forks are beneath their source"
        assert not tree.currentIndex().isValid()  # nothing opened on its own
        image = window.grab().toImage()
        assert not image.isNull()
        last = tree.model().index(tree.model().rowCount() - 1, 0)
        tree.setCurrentIndex(last)  # chosen while the store opens
        chosen = window.selected_session()
        assert chosen is not None
        assert c.current is None  # not opened yet: that needs the client
        for action in (window.action_new, window.action_fork, window.action_delete,
                       window.action_duplicate, window.features["branches"].rename):
            assert not action.isEnabled(), action.objectName()

        release.set()
        await until(lambda: c.loaded, what="the listing")
        assert set(c.tree.session_ids()) == everyone
        await until(lambda: c.current == chosen, what="the chosen session opened")
        assert window.selected_session() == chosen
        assert window.action_fork.isEnabled()
        assert window.action_new.isEnabled()
        await c.ops.wait_idle()
        window.close()
        return await asyncio.wait_for(session, 15), chosen

    status, _chosen = aloop(scenario())
    assert status == 0


def listed(store: Path) -> list[SessionSummary]:
    """The store's summaries, its index written on the way."""
    opened = SessionStore(JsonlBackend(store))
    try:
        return opened.list()
    finally:
        opened.close()


def test_a_row_chosen_in_the_first_page_stays_chosen_when_the_rest_arrives(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorted by activity, the preview is the first page of rows; the listing brings the
    rest (a reload of the tree), and the row chosen meanwhile is still the chosen one."""
    store = write_store(tmp_path / "store", 450, 6)
    assert len(listed(store)) == 450
    asked, release = hold_store_open(monkeypatch)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> tuple[int, str]:
        session, window = await start_held(qapp, store, settings, asked)
        c, tree = window.controller, window.tree
        page = c.tree.page_rows
        assert len(c.tree.session_ids()) == page
        shown = set(c.tree.session_ids())
        updated = {s.id: s.updated for s in listed(store)}
        assert min(updated[sid] for sid in shown) >= max(
            u for sid, u in updated.items() if sid not in shown)  # the most recent ones
        tree.setCurrentIndex(tree.model().index(5, 0))
        chosen = window.selected_session()
        assert chosen is not None
        release.set()
        await until(lambda: c.loaded, what="the listing")
        assert len(c.tree.session_ids()) == 450
        await until(lambda: c.current == chosen, what="the chosen session opened")
        assert window.selected_session() == chosen
        await c.ops.wait_idle()
        window.close()
        return await asyncio.wait_for(session, 15), chosen

    status, _chosen = aloop(scenario())
    assert status == 0


def test_a_store_that_cannot_be_opened_says_so_in_a_dialog_then_returns_1(
        aloop: Any, qapp: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("not a store")
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> tuple[int, str, str]:
        session = asyncio.ensure_future(
            app_module._session(qapp, not_a_dir, None, None, settings=settings))
        box = await until(QApplication.activeModalWidget, what="a modal dialog")
        assert isinstance(box, QMessageBox)
        assert box.icon() == QMessageBox.Icon.Critical
        assert box.isVisible()
        window = shown_window()
        assert window is not None, "the window stays behind the dialog until it is closed"
        assert box.parent() is window
        assert not session.done(), "the app waits for the person to close the dialog"
        text, advice = box.text(), box.informativeText()
        close = box.button(QMessageBox.StandardButton.Close)
        assert close is not None
        close.click()
        return await asyncio.wait_for(session, 15), text, advice

    status, text, advice = aloop(scenario())
    assert status == 1
    assert shown_window() is None
    assert QApplication.activeModalWidget() is None
    assert f"could not open the session store at {not_a_dir}" in text
    assert "is a file, not a folder" in text  # the operating system's reason, in words
    assert "--store" in advice  # what to do about it
    assert "connection" not in text.lower()
    assert "text" not in (text + advice).lower()  # no text was involved
    err = capsys.readouterr().err
    assert err.startswith("forkwise: ")
    assert text in err  # the same words on stderr


def test_rows_from_the_index_go_when_the_store_then_cannot_be_opened(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index is readable but the host cannot take the store (its lock file is a
    folder): the rows it showed go, and the tree says the sessions could not be loaded."""
    store = tmp_path / "store"
    build_demo_store(store)
    assert listed(store)
    lock = store / "writer.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    asked, release = hold_store_open(monkeypatch)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> tuple[int, int, int, str, bool]:
        session, window = await start_held(qapp, store, settings, asked)
        previewed = window.controller.tree.rowCount()
        release.set()
        box = await until(QApplication.activeModalWidget, what="the error dialog")
        assert isinstance(box, QMessageBox)
        rows = window.controller.tree.rowCount()
        placeholder = window.tree.placeholder
        text, visible = placeholder.text(), placeholder.isVisible()
        close = box.button(QMessageBox.StandardButton.Close)
        assert close is not None
        close.click()
        return await asyncio.wait_for(session, 15), previewed, rows, text, visible

    status, previewed, rows, text, visible = aloop(scenario())
    assert status == 1
    assert previewed > 0
    assert rows == 0
    assert text == "The sessions could not be loaded."
    assert visible


def test_the_app_on_a_store_that_cannot_be_opened_shows_the_dialog_and_exits_1(
        tmp_path: Path) -> None:
    """The real app: stderr says what happened, the dialog stays up (a person has to see
    it; the structured log says when it is shown), and closing it (here: SIGTERM, which
    closes it like Ctrl+C in the terminal would) ends the process with 1."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("not a store")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               FORKWISE_LOG="INFO")
    code = "import sys; from forkwise.gui.app.launcher import main; sys.exit(main(sys.argv[1:]))"
    lines: list[str] = []
    with subprocess.Popen([sys.executable, "-c", code, "--store", str(not_a_dir)], env=env,
                          stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True) as proc:
        assert proc.stderr is not None
        try:
            for line in proc.stderr:  # the process ends (EOF) if it never shows the dialog
                lines.append(line)
                if "forkwise.gui.app.start_error: start error dialog shown" in line:
                    break
            assert proc.poll() is None, "".join(lines)
            proc.send_signal(signal.SIGTERM)
            _, rest = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = "".join(lines) + rest
    assert "start error dialog shown" in stderr, stderr
    assert proc.returncode == 1
    assert "\nforkwise: " in stderr
    assert str(not_a_dir) in stderr
    assert "Traceback" not in stderr


def test_a_self_test_on_a_store_that_cannot_be_opened_exits_1_without_a_dialog(
        tmp_path: Path) -> None:
    """--self-test runs unattended (packaging): nobody could close a dialog."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("not a store")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               FORKWISE_LOG="INFO")
    code = "import sys; from forkwise.gui.app.launcher import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, "--self-test", "--store", str(not_a_dir)],
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert "forkwise: " in result.stderr
    assert str(not_a_dir) in result.stderr
    assert "start error dialog shown" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_title_column_keeps_its_width_when_the_rows_arrive(
        aloop: Any, qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = write_store(tmp_path / "store", 90, 6)  # more rows than fit: a scroll bar
    asked, release = hold_store_open(monkeypatch)
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)

    async def scenario() -> tuple[int, int, int]:
        session, window = await start_held(qapp, store, settings, asked)
        tree = window.tree
        assert tree.placeholder.isVisible()
        loading = tree.header().sectionSize(TITLE)
        release.set()
        await until(lambda: tree.model().rowCount() > 0, what="rows in the tree")
        await window.controller.ops.wait_idle()
        await asyncio.sleep(0)  # the layout of the rows
        assert tree.verticalScrollBar().maximum() > 0  # more rows than fit
        loaded = tree.header().sectionSize(TITLE)
        window.close()
        return loading, loaded, await asyncio.wait_for(session, 15)

    loading, loaded, status = aloop(scenario())
    assert status == 0
    assert loaded == loading
