"""Helpers for driving the assembled app in tests (imported by the GUI tests)."""


from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import PySide6.QtWidgets  # noqa: F401  (before qasync: it picks the first binding it finds)
from polling import until  # the GUI tests wait with it (tests/polling.py)
from PySide6.QtCore import QModelIndex, QSettings
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from forkwise.core.client.client import Client
from forkwise.core.demo import build_demo_store
from forkwise.core.host.host import Host
from forkwise.core.host.rpc import RpcServer
from forkwise.core.host.socket_server import SocketServer
from forkwise.core.reading.entries import Entry
from forkwise.gui.app.features import FEATURES
from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.notify import Notifier
from forkwise.gui.models.session_rows import ID_ROLE
from forkwise.gui.shell.main_window import MainWindow

T = TypeVar("T")
TIMEOUT = 15.0


def qt_events() -> None:
    """Deliver Qt's pending posted events (layout, resize, paint requests, queued signals)
    now, inside a scenario. Never `QApplication.processEvents()` there: on the qasync
    loop it also runs due timers, which are asyncio's callbacks, and a task woken inside
    the scenario's step is refused by asyncio and never runs again (scenario_watchdog)."""
    QApplication.sendPostedEvents()


def model_tree(model: Any, parent: QModelIndex | None = None) -> dict[str, Any]:
    parent = parent or QModelIndex()
    out: dict[str, Any] = {}
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out[model.data(index, ID_ROLE)] = model_tree(model, index)
    return out


def expected_tree(catalogue: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Independent statement of the lineage: each session beneath its known parent."""

    def below(pid: str | None) -> dict[str, Any]:
        return {
            sid: below(sid)
            for sid, s in catalogue.items()
            if (s["parentSession"] if s["parentSession"] in catalogue else None) == pid
        }

    return below(None)


@dataclass
class App:
    host: Host
    client: Client
    controller: Controller
    window: MainWindow
    notifier: Notifier
    store_dir: Path
    server: SocketServer | None = None

    def sid(self, title: str) -> str:
        for sid in self.controller.tree.session_ids():
            if (self.controller.tree.summary(sid) or {}).get("title") == title:
                return sid
        raise KeyError(title)

    @property
    def entries(self) -> list[Entry]:
        return self.controller.transcript.builder.entries

    def rows(self, kind: str, contains: str = "") -> list[int]:
        return [i for i, e in enumerate(self.entries) if e.kind == kind and contains in e.text]

    async def open(self, sid: str) -> None:
        self.window.select_session(sid)
        await until(lambda: self.controller.current == sid and self.controller.transcript.at_end
                    and not self.controller.transcript.fetching, what=f"{sid} opened")
        await self.controller.ops.wait_idle()

    async def idle(self) -> None:
        await self.controller.ops.wait_idle()
        await asyncio.sleep(0)

    def message_menu(self, row: int) -> QMenu:
        """Ask for the context menu like a person would (a QContextMenuEvent)."""
        view = self.window.transcript
        view.scrollTo(self.controller.transcript.index(row))
        pos = view.menu_position(row)
        event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos,
                                  view.viewport().mapToGlobal(pos))
        QApplication.sendEvent(view.viewport(), event)
        assert view.last_menu is not None
        return view.last_menu

    def log(self, sid: str) -> list[dict[str, Any]]:
        import orjson

        path = self.store_dir / "sessions" / f"{sid}.jsonl"
        return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


@asynccontextmanager
async def open_app(root: Path, *, carrier: str = "inproc", demo: bool = True,
                   **host_options: Any) -> AsyncIterator[App]:
    store_dir = root / "store"
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    if demo:
        build_demo_store(store_dir)
    host = Host.open(store_dir, default_cwd=str(work), **host_options)
    rpc = RpcServer(host)
    server: SocketServer | None = None
    sock_dir = Path(tempfile.mkdtemp(prefix="fw-"))  # short: unix socket paths are limited
    if carrier == "unix":
        server = await SocketServer.start(rpc, f"unix:{sock_dir / 'h.sock'}")
        client = await Client.connect(str(server.address))
    else:
        client = await Client.in_process(host)
    notifier = Notifier()
    controller = Controller(client, notifier)
    settings = QSettings(str(root / "gui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(controller, settings, store_label=str(store_dir), features=FEATURES)
    window.resize(1280, 800)
    window.show()
    loaded: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    controller.treeLoaded.connect(lambda n: loaded.done() or loaded.set_result(n))
    controller.start()
    app = App(host, client, controller, window, notifier, store_dir, server)
    try:
        await asyncio.wait_for(loaded, TIMEOUT)
        await app.idle()
        yield app
    finally:
        await controller.stop()
        controller.ops.cancel_all()
        await asyncio.sleep(0)
        window.close()
        window.deleteLater()
        try:
            await client.close()
        finally:
            if server is not None:
                await server.close()
            await rpc.close()
            await host.close()
            shutil.rmtree(sock_dir, ignore_errors=True)


def claude_sessions(root: Path, sids: list[str], monkeypatch: Any) -> None:
    """One exchange in each of the Claude Code sessions `sids`, written (long ago) where
    Claude Code would under `root`/claude: the one agent's folder the environment names
    (Codex's and pi's name folders that do not exist)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
    import claude_fixtures as cf

    claude = root / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    for name in ("CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.setenv(name, str(root / "none" / name))
    for sid in sids:
        chat = cf.Transcript(sid)
        chat.exchange(f"question of {sid[:4]}", "an answer")
        cf.write_old(chat, claude)


def agents_home(root: Path) -> tuple[dict[str, str], Any]:
    """Claude Code (with a rewind), pi (with branches) and Codex (with a fork) sessions
    under `root`, in the folders each agent uses: the environment that names those
    folders, and the Claude Code transcript (to grow it as Claude Code would)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
    import claude_fixtures as cf
    import pi_fixtures as pf
    from codex_fixtures import home_with_fork

    claude = root / "claude"
    chat = cf.Transcript(cf.SID)
    cf.rewound(chat)
    cf.write_old(chat, claude)
    pi = root / "pi"
    branchy, _ = pf.branchy()
    pf.settled(branchy.write(pi / "sessions" / "--home-ada-project--"))
    codex = home_with_fork(root / "codex-home")
    env = {"CLAUDE_CONFIG_DIR": str(claude), "PI_CODING_AGENT_DIR": str(pi),
           "CODEX_HOME": str(codex)}
    return env, chat


def run_on_demo(tmp_path: Path, script: str) -> dict[str, Any]:
    """Run `script` in a fresh offscreen process on a demo store; what it printed last
    (JSON), after checking the app's run ended well."""
    store = tmp_path / "store"
    build_demo_store(store)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               QT_LOGGING_RULES="qt.qpa.*=false", XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run([sys.executable, "-c", script, str(store)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["status"] == 0
    return seen
