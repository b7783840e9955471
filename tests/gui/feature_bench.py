"""One feature without the app: the window's interface (`Bench`) over a real session
service and a real client, with no main window and no other feature installed.

The client is the real one over an in-process host (a JSONL store in the test's folder):
it implements the client protocol because it is the client. `FeatureBench` gives a
feature only what `Bench` promises — the service, the session list, the composer, a
transcript built when asked for, actions placed in menus by id, detail lines and title
notes — and the window's own actions a feature answers (Delete, Duplicate, Approve, Deny,
Preferences) as bare actions, so a test sees what the feature alone does.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import PySide6.QtWidgets  # noqa: F401  (before qasync: it picks the first binding it finds)
from polling import until
from PySide6.QtCore import QItemSelectionModel, QSettings, Qt
from PySide6.QtWidgets import QMainWindow, QMenu, QSplitter, QVBoxLayout, QWidget

from forkwise.core.client.client import Client
from forkwise.core.demo import build_demo_store
from forkwise.core.host.host import Host
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.notify import Notifier
from forkwise.gui.models.session_rows import ID_ROLE
from forkwise.gui.sessions.session_tree import SessionTree
from forkwise.gui.shell.bench import ActionSpec, Bench, MenuId, TitleNote, TranscriptCalls
from forkwise.gui.shell.menus import ActionsWindow
from forkwise.gui.transcript.composer import Composer
from forkwise.gui.transcript.row_links import RowLinks
from forkwise.gui.transcript.transcript_view import TranscriptView

TIMEOUT = 15.0
#: the window's own actions that features connect to (made by the main window there)
WINDOW_ACTIONS = ("actionDeleteSession", "actionDuplicateSession", "actionApprove",
                  "actionDeny", "actionPreferences")


class FeatureBench(ActionsWindow):
    """`Bench` with nothing behind it but the service (see the module docstring)."""

    def __init__(self, controller: Controller, settings: QSettings) -> None:
        super().__init__()
        self.controller = controller
        self.settings = settings
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.setCentralWidget(self.splitter)
        self.tree = SessionTree(self.splitter, controller)
        self.tree.setModel(controller.proxy)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.right = QWidget(self.splitter)
        self.right_layout = QVBoxLayout(self.right)
        self.composer = Composer(self.right)
        self.right_layout.addWidget(self.composer)
        self.detail_lines: list[QWidget] = []
        self.title_notes: list[TitleNote] = []
        self.copied: list[str] = []
        self._transcript: TranscriptView | None = None
        self._transcript_calls = TranscriptCalls()
        for menu_id in (MenuId.FILE, MenuId.EDIT, MenuId.SESSION, MenuId.HELP):
            menu = self.menuBar().addMenu(menu_id.value)
            menu.setObjectName(menu_id.value)
            self.menu_book.attach(menu_id, menu)
        for action_id in WINDOW_ACTIONS:
            self.add_action(ActionSpec(action_id, action_id, action_id))

    def _current_changed(self, current: Any, _previous: Any) -> None:
        sid = current.siblingAtColumn(0).data(ID_ROLE) if current.isValid() else None
        if sid:
            self.controller.open_session(str(sid))

    # --- Bench ------------------------------------------------------------------------

    @property
    def transcript(self) -> TranscriptView:
        if self._transcript is None:
            view = self._transcript = TranscriptView(self.right)
            view.setModel(self.controller.transcript)
            view.title_of = self.controller.tree.title_of
            view.sessionRequested.connect(self.select_session)
            self.right_layout.insertWidget(len(self.detail_lines), view, 1)
            self._transcript_calls.built(view)
        return self._transcript

    def transcript_if_built(self) -> TranscriptView | None:
        return self._transcript

    def on_transcript(self, call: Callable[[TranscriptView], None]) -> None:
        self._transcript_calls.add(call)

    def link_rows(self, links: RowLinks) -> None:
        self.on_transcript(lambda view: view.link_rows(links))

    def widget(self) -> QMainWindow:
        return self

    def selected_session(self) -> str | None:
        index = self.tree.currentIndex()
        sid = index.siblingAtColumn(0).data(ID_ROLE) if index.isValid() else None
        return str(sid) if sid else None

    def select_session(self, session_id: str, at_seq: int | None = None) -> None:
        c = self.controller
        source = c.tree.reveal(session_id)
        if at_seq is not None:
            c.open_session(session_id, at_seq=at_seq)
        index = c.proxy.mapFromSource(source)
        self.tree.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)

    def add_detail_line(self, line: QWidget) -> None:
        self.right_layout.insertWidget(len(self.detail_lines), line)
        self.detail_lines.append(line)

    def add_title_note(self, note: TitleNote) -> None:
        self.title_notes.append(note)

    def refresh_title(self) -> None:
        pass  # no title line here: a test asks the notes itself

    def copy_text(self, text: str) -> None:
        self.copied.append(text)

    def menu(self, menu_id: MenuId) -> QMenu:
        return self.menu_book.live[menu_id]


@dataclass
class Rig:
    bench: FeatureBench
    installed: Any
    controller: Controller
    client: Client
    host: Host
    store: Path

    def sessions(self) -> list[str]:
        return self.controller.tree.session_ids()

    async def open(self, sid: str) -> None:
        self.bench.select_session(sid)
        c = self.controller
        await until(lambda: c.current == sid and c.transcript.at_end
                    and not c.transcript.fetching, TIMEOUT, f"{sid} opened")
        await c.ops.wait_idle()


@asynccontextmanager
async def feature_alone(root: Path, install: Callable[[Bench], Any], *,
                        store: Path | None = None) -> AsyncIterator[Rig]:
    """`install(bench)` on a `FeatureBench` over a loaded store (the demo's unless
    `store` is given)."""
    if store is None:
        store = root / "store"
        build_demo_store(store)
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    host = Host.open(store, default_cwd=str(work))
    client = await Client.in_process(host)
    controller = Controller(client, Notifier())
    bench = FeatureBench(controller, QSettings(str(root / "gui.ini"),
                                               QSettings.Format.IniFormat))
    bench.resize(1100, 700)
    bench.show()
    loaded: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    controller.treeLoaded.connect(lambda n: loaded.done() or loaded.set_result(n))
    controller.start()
    try:
        await asyncio.wait_for(loaded, TIMEOUT)
        installed = install(bench)
        await controller.ops.wait_idle()
        yield Rig(bench, installed, controller, client, host, store)
    finally:
        await controller.stop()
        controller.ops.cancel_all()
        await asyncio.sleep(0)
        bench.close()
        bench.deleteLater()
        try:
            await client.close()
        finally:
            await host.close()
            shutil.rmtree(work, ignore_errors=True)
