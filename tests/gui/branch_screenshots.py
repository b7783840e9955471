"""Screenshots of the branch views (issue 17): siblings 2/3 at a fork point, the compare
view, a child whose source changed, the window at 900x600. Not a test (no `test_` prefix):

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/gui/branch_screenshots.py OUT

Drives the real app over the in-process host and a demo store in a temp dir, through
the same harness the GUI tests use, and saves one PNG per view (`QWidget.grab`).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: polling, run as a script

import PySide6.QtWidgets  # noqa: F401
import qasync
from gui_harness import App, open_app, until
from PySide6.QtWidgets import QApplication

PLAN = "Plan the 2.5 release"
QUICK = "Quick question about tabs vs spaces"


async def fork_and_ask(app: App, source: str, question: str) -> str:
    c = app.controller
    await app.open(source)
    before = set(c.tree.session_ids())
    app.window.action_fork.trigger()
    sid = await until(lambda: next(iter(set(c.tree.session_ids()) - before), None))
    await until(lambda: c.current == sid and c.transcript.at_end)
    await app.idle()
    app.window.composer.set_text(question)
    app.window.composer.submit()
    await until(lambda: any(e.kind == "user" and e.text == question for e in app.entries))
    while c.transcript.running:
        pending = [e for e in app.entries
                   if e.kind == "approval" and e.data.get("decision") is None]
        if pending:
            entry = pending[0]
            c.approve(str(entry.data["approval"]), True)
            await until(lambda e=entry: e.data.get("decision") is not None)
        await asyncio.sleep(0.05)
    await app.idle()
    return str(sid)


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="forkwise-branch-shots-"))
    async with open_app(root) as app:
        w, c = app.window, app.controller
        quick = app.sid(QUICK)
        kids = [await fork_and_ask(app, quick, q) for q in (
            "What does gofmt use?", "And for Python, what does PEP 8 say?",
            '/tool list_dir {"path": "."}')]
        await app.open(kids[1])
        await until(lambda: w.transcript.fork_header() is not None)
        await app.idle()
        await asyncio.sleep(0.3)
        w.grab().save(str(out / "siblings-2-of-3.png"))

        w.features["branches"].select_pair(kids[0], kids[2])
        w.features["branches"].compare.trigger()
        await until(lambda: w.features["branches"].compare_view is not None
                    and w.features["branches"].compare_view.isVisible())
        await app.idle()
        await asyncio.sleep(0.3)
        w.features["branches"].compare_view.grab().save(str(out / "compare-view.png"))
        w.features["branches"].compare_view.close()

        plan = app.sid(PLAN)
        child = await fork_and_ask(app, plan, "Could we ship on a Thursday instead?")
        await app.open(plan)
        first = app.entries[app.rows("user")[0]]
        await app.client.truncate(plan, str(first.message_id), include_message=True)
        await app.idle()
        await app.open(child)
        w.transcript.scrollToTop()
        await until(lambda: w.transcript.fork_header() is not None
                    and w.transcript.fork_header().changed.isVisibleTo(w))
        fork_row = next(i for i, e in enumerate(app.entries) if e.kind == "fork")
        w.transcript.scrollTo(c.transcript.index(fork_row - 3),
                              w.transcript.ScrollHint.PositionAtTop)
        await asyncio.sleep(0.3)
        w.grab().save(str(out / "source-changed.png"))

        w.resize(900, 600)
        await app.open(kids[1])
        await asyncio.sleep(0.5)
        w.grab().save(str(out / "window-900x600.png"))


if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(Path(sys.argv[1] if len(sys.argv) > 1 else "shots")))
