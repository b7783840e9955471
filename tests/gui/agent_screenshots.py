"""Take the README screenshots of the agents' sessions:
`xvfb-run -s "-screen 0 1280x800x24" python tests/gui/agent_screenshots.py OUT`.

A home holding Claude Code (with a rewind), Codex (with a fork) and pi (with a branch)
sessions, the demo store beside them; the real app started on it brings them in as it
does for a person (the agents' folders are watched from the start). Saves
agents-imported.png (an imported Claude Code session open) and continue-in.png (Continue
in Codex on a Codex fork). Not a test (no `test_` prefix).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: polling, run as a script

import claude_fixtures as cf
import PySide6.QtWidgets  # noqa: F401
from codex_fixtures import thread_id
from gui_harness import agents_home, until
from PySide6.QtWidgets import QApplication, QMenu
from screenshots import run_script, settle, start_app

from forkwise.core.demo import build_demo_store
from forkwise.gui.features.agents.continue_in import ContinueDialog


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="forkwise-agents-"))
    env, _ = agents_home(root)
    os.environ.update(env)
    store = root / "store"
    build_demo_store(store)
    shot = await start_app(store, root)
    opened, controller, window = shot.opened, shot.controller, shot.window
    tree = controller.tree
    codex_fork = f"codex-{thread_id(2)}"
    claude = f"claude-{cf.SID}"
    await until(lambda: {codex_fork, claude} <= set(tree.session_ids()))
    await settle(controller, 1.0)
    window.tree.expandAll()  # the rewind, fork and branch beneath their sessions
    window.select_session(claude)
    await settle(controller, 1.0)
    window.grab().save(str(out / "agents-imported.png"))

    window.select_session(codex_fork)
    await settle(controller, 0.6)
    menu = window.findChild(QMenu, "menuContinueIn")
    menu.aboutToShow.emit()
    next(a for a in menu.actions() if a.objectName() == "actionContinueCodex").trigger()
    dialog = None
    for _ in range(100):
        found = [w for w in QApplication.topLevelWidgets()
                 if isinstance(w, ContinueDialog) and w.isVisible()]
        if found:
            dialog = found[-1]
            break
        await asyncio.sleep(0.1)
    assert dialog is not None, "no Continue in dialog"
    await asyncio.sleep(0.5)
    dialog.grab().save(str(out / "continue-in.png"))
    dialog.close()
    await controller.stop()
    window.close()
    await opened.client.close()


if __name__ == "__main__":
    run_script(main, "/tmp/shots")
