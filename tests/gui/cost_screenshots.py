"""Take the README screenshots of usage and cost and of the two newer agents:
`python tests/gui/cost_screenshots.py OUT` (offscreen).

A home holding Claude Code (with a rewind), Codex (with a fork), pi (with a branch),
Gemini CLI (with a rewind) and OpenCode (with a fork) sessions; the real app started on it brings them in
as it does for a person. Saves costs-list.png (the list with its Cost column, an imported
Claude Code branch open, its fork header's shared prefix) and compare-costs.png (a main
line and its branch, each one's own cost, the shared prefix once). Not a test.
preferences-vendors.png comes from tests/gui/features/preferences/test_vendor_editing.py with FORKWISE_SHOTS
set (a stand-in Anthropic endpoint lists its models).
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
from gemini_fixtures import coding_session, settled, tokens
from gui_harness import agents_home, until
from opencode_fixtures import OpenCodeDb
from screenshots import run_script, settle, start_app


def more_agents(root: Path) -> dict[str, str]:
    chat = coding_session()
    # /rewind to the second prompt, then asked otherwise: what it dropped becomes a fork
    second = [mid for mid, m in chat.messages.items() if m["type"] == "user"][1]
    chat.rewind(second)
    chat.user("Now count the lines of main.py")
    chat.gemini("main.py has 42 lines.", usage=tokens(210, 9))
    settled(chat.write(root / "home" / ".gemini"))
    db = OpenCodeDb(root / "data" / "opencode" / "opencode.db")
    sid = db.session("Fix the parser")
    db.exchange(sid, "Why does the parser fail?", "A missing colon on line 12.")
    db.exchange(sid, "Fix it and run the tests", "Fixed; 14 tests pass.")
    db.fork(sid)
    db.close()
    return {"GEMINI_CLI_HOME": str(root / "home"), "XDG_DATA_HOME": str(root / "data")}


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="forkwise-costs-"))
    env, _ = agents_home(root)
    env.update(more_agents(root))
    env["ANTHROPIC_API_KEY"] = "sk-ant-stand-in"  # shown as "set in the environment" only
    env["FORKWISE_CONFIG_DIR"] = str(root / "config")
    os.environ.update(env)
    store = root / "store"
    shot = await start_app(store, root)
    opened, controller, window = shot.opened, shot.controller, shot.window
    tree = controller.tree
    main_line = f"claude-{cf.SID}"
    await until(lambda: main_line in tree.session_ids()
                and sum(s.startswith("gemini-") for s in tree.session_ids()) >= 2
                and sum(s.startswith("opencode-") for s in tree.session_ids()) >= 2)
    await settle(controller, 1.5)
    window.splitter.setSizes([640, 640])
    window.tree.expandAll()
    branch = next(s for s in tree.session_ids()
                  if (tree.summary(s) or {}).get("parentSession") == main_line)
    window.select_session(branch)
    await settle(controller, 1.5)
    window.grab().save(str(out / "costs-list.png"))

    branches = window.features["branches"]
    branches.select_pair(main_line, branch)
    branches.compare.trigger()
    await until(lambda: branches.compare_view is not None and branches.compare_view.isVisible())
    await asyncio.sleep(0.8)
    branches.compare_view.resize(1000, 560)
    await asyncio.sleep(0.3)
    branches.compare_view.grab().save(str(out / "compare-costs.png"))
    branches.compare_view.close()
    await controller.stop()
    window.close()
    await opened.client.close()


if __name__ == "__main__":
    run_script(main, "/tmp/shots")
