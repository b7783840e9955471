"""A Claude Code session that reads as its agent shows it (Markdown, code, tools), opened
in the app, and a card's laid-out document."""

from __future__ import annotations

import os
from pathlib import Path

import claude_fixtures as cf
import test_claude_document as doc_session
from gui_harness import App, until
from PySide6.QtGui import QTextDocument

#: a folder to save the README's screenshots in (FORKWISE_SHOTS=resources/screenshots)
SHOTS = os.environ.get("FORKWISE_SHOTS")
SID = f"claude-{doc_session.SID}"


def write_session(root: Path, turns: int = 0) -> Path:
    """The export tests' session, after `turns` turns that ran a command (a long output)."""
    t = doc_session.session()
    for n in range(turns):
        t.tool_turn(f"run step {n}", f"make step{n}",
                    "\n".join(f"step {n} line {i}" for i in range(12)), f"Step {n} done.")
    path = t.write(cf.project_file(root, t))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root


async def opened(app: App, root: Path, sid: str = SID) -> None:
    report = await app.client.import_files([str(root)])
    assert not report["failed"], report
    await until(lambda: sid in app.controller.tree.session_ids(), what="imported")
    await app.idle()
    await app.open(sid)


def card_doc(app: App, row: int) -> QTextDocument:
    view = app.window.transcript
    return view.delegate._doc(app.entries[row], view.delegate._width(), view.palette())
