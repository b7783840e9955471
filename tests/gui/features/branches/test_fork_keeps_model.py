"""End to end in the app: a fork of an imported Claude Code session answers with that
session's Claude model. A real-format Claude Code file is imported, Fork is pressed in the
window, a question typed into the composer is sent, and the product's Anthropic provider
(the real `anthropic` SDK) reaches a stand-in Messages server on 127.0.0.1 through
$ANTHROPIC_BASE_URL; the answer shows in the fork's transcript."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import open_app, until
from PySide6.QtWidgets import QLabel

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "providers"))
from fake_endpoint import Server
from vendor_streams import claude_stream

pytestmark = pytest.mark.gui
KEY = "sk-ant-standin-0123456789abcdef"
ANSWER = "The fixture in conftest.py opens a socket it never closes."
#: a folder to save the README's screenshot in (FORKWISE_SHOTS), else none is taken
SHOTS = os.environ.get("FORKWISE_SHOTS", "")


def claude_file(root: Path) -> Path:
    chat = cf.Transcript(cf.SID)
    chat.exchange("Why does the test suite hang on CI?", "Let me look at the CI logs.")
    chat.tool_turn("run the tests", "pytest -q", "12 passed, 1 hanging", "One test hangs.")
    return chat.write(root / f"{cf.SID}.jsonl")


def test_a_fork_of_an_imported_claude_code_session_answers_with_its_model(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    path = claude_file(tmp_path / "claude")

    async def scenario() -> None:
        server = Server()
        await server.start()
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.port}")
        try:
            async with open_app(tmp_path, demo=False) as app:
                # as the app's start does (connect): the vendors the environment configures
                assert await app.host.apply_saved_settings() == ""
                report = await app.client.import_files([str(path)])
                assert not report["failed"], report
                (source,) = report["imported"]
                await until(lambda: source in app.controller.tree.session_ids(),
                            what="the imported row")
                await app.open(source)
                before = set(app.controller.tree.session_ids())
                app.window.action_fork.trigger()
                child = await until(lambda: next(iter(set(app.controller.tree.session_ids())
                                                      - before), None), what="the fork")
                await until(lambda: app.controller.current == child, what="the fork opened")
                await app.idle()
                row = app.controller.tree.summary(child)
                assert row is not None
                assert row["model"] == cf.MODEL  # the source's model, not the default
                # no "answers with another model" note: its own vendor is configured
                note = app.window.findChild(QLabel, "answeringModel")
                assert not note.isVisibleTo(app.window)

                server.stream(claude_stream(text=ANSWER, model=cf.MODEL), done=False)
                app.window.composer.set_text("which fixture hangs?")
                app.window.composer.submit()
                await until(lambda: app.rows("assistant", ANSWER), what="the answer")
                await until(lambda: not app.controller.transcript.running,
                            what="the turn ended")
                (request,) = server.requests
                assert request.path == "/v1/messages"
                body = request.json()
                assert body["model"] == cf.MODEL
                # the whole history went with it, the new question last
                texts = [part.get("text") for m in body["messages"] for part in m["content"]
                         if isinstance(part, dict)]
                assert texts[0] == "Why does the test suite hang on CI?"
                assert texts[-1] == "which fixture hangs?"
                # the fork's log holds the answer and what it used, by that model
                log = app.log(child)
                usage = [e for e in log if e["type"] == "usage"]
                assert usage
                assert usage[-1]["model"] == cf.MODEL
                if SHOTS:
                    app.window.resize(1280, 860)
                    app.window.transcript.scrollToBottom()
                    await app.idle()
                    app.window.grab().save(str(Path(SHOTS) / "fork-keeps-model.png"))
        finally:
            await server.close()

    aloop(scenario())
