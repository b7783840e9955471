"""Reading a transcript as a person does (the UX pass): a subagent says who started it, a
Task call opens its subagent, a fork of a deleted session says so, a failed turn says
why, Codex's shell output reads as text. Real window and store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, qt_events, until
from task_scene import PROMPT, claude_task_session, open_task_call

from forkwise.core.bench.synth_sources import codex_home
from forkwise.gui.models.transcript_model import plain_text
from forkwise.gui.transcript.fork_header import ForkHeader
from forkwise.gui.transcript.transcript_delegate import MARGIN_X, MARGIN_Y
from forkwise.gui.transcript.transcript_html import entry_html

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")

PLAN = "Plan the 2.5 release"
SUBAGENT = "Subagent: list the release scripts"
SHORTER = "2.5 release — two-week schedule"


def test_a_subagent_says_who_started_it(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            await app.open(app.sid(SUBAGENT))
            header = await until(lambda: w.transcript.findChild(ForkHeader), what="header")
            text = header.link.text()
            assert text.startswith("<b>Subagent started by</b>"), text
            assert PLAN in text
            assert header.link.accessibleName().startswith(f"Subagent started by {PLAN}")
            # a fork still says it was forked
            await app.open(app.sid(SHORTER))
            await until(lambda: [h for h in w.transcript.findChildren(ForkHeader)
                                 if h.link.text().startswith("<b>Forked from</b>")],
                        what="the fork's header")

    aloop(scenario())


def test_a_task_call_opens_the_subagent_it_started(aloop: Any, tmp_path: Path) -> None:
    projects = claude_task_session(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c = app.controller
            parent, child, task = await open_task_call(app, projects)
            menu = app.message_menu(task)
            first = menu.actions()[0]
            assert first.objectName() == "actionOpenSubagent"
            assert PROMPT in first.text()
            first.trigger()
            await until(lambda: c.current == child, what="the subagent opened")
            # an ordinary message's menu has no such entry
            await app.open(parent)
            (question,) = app.rows("user")
            names = [a.objectName() for a in app.message_menu(question).actions()]
            assert "actionOpenSubagent" not in names

    aloop(scenario())


def test_a_fork_of_a_deleted_session_says_so(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w, c = app.window, app.controller
            plan, shorter = app.sid(PLAN), app.sid(SHORTER)
            await app.client.delete_session(plan)
            await until(lambda: c.tree.summary(plan) is None, what="deleted")
            await app.open(shorter)
            header = await until(lambda: [h for h in w.transcript.findChildren(ForkHeader)
                                          if h.isVisible()], what="header")
            text = header[0].link.text()
            # not a link to an id that opens nothing
            assert "no longer in the store" in text, text
            assert plan not in text
            assert "href" not in text

    aloop(scenario())


def test_a_failed_turn_says_why(aloop: Any, tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    codex_home(home, 0.02)  # sessions of gpt-5-codex, a provider not configured here

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            report = await app.client.import_files([str(home)], "codex")
            imported = report["imported"][0]
            await until(lambda: c.tree.summary(imported) is not None, what="imported")
            await app.open(imported)
            w.composer.edit.setPlainText("continue please")
            w.composer.send_button.click()
            ended = await until(lambda: [e for e in app.entries
                                         if e.kind == "turn" and e.text == "failed"],
                                what="the failed turn")
            html_text = entry_html(ended[-1], w.transcript.palette())
            assert "no provider" in html_text  # the host's reason
            assert "Use the model from Preferences" in html_text  # and the way out
            assert "no provider" in plain_text(ended[-1])  # Copy and screen readers
            assert c.current == imported

    aloop(scenario())


def test_codex_shell_output_reads_as_text_and_wraps(aloop: Any, tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    codex_home(home, 0.02)  # Codex rollouts: shell calls whose output is a JSON string

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            w, c = app.window, app.controller
            report = await app.client.import_files([str(home)], "codex")
            first = report["imported"][0]
            await until(lambda: c.tree.summary(first) is not None, what="imported")
            await app.open(first)
            calls = [e for e in app.entries if e.kind == "tool" and e.data.get("result")]
            assert calls
            raw = calls[0].data["result"]
            assert isinstance(raw, str)
            assert raw.startswith('{"output"')  # as Codex wrote it
            shown = entry_html(calls[0], w.transcript.palette())
            assert '{"output"' not in shown.replace("&quot;", '"')
            assert "line 0: " in shown
            assert "\\n" not in shown  # real line breaks, not escaped ones
            # a line longer than the card wraps inside it
            width = 300
            doc = w.transcript.delegate._doc(calls[0], width, w.transcript.palette())
            assert doc.idealWidth() <= width

    aloop(scenario())


def test_message_text_stays_inside_its_card(aloop: Any, tmp_path: Path) -> None:
    words = " ".join(f"word{n}" for n in range(400))  # a long answer: many full lines

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            v = w.transcript
            tabs = app.sid("Quick question about tabs vs spaces")
            await app.client.prompt_and_wait(tabs, words)  # the offline model echoes it
            await app.open(tabs)
            (row,) = app.rows("user", "word399")
            v.scrollTo(v.model().index(row, 0))
            await app.idle()
            qt_events()
            image = v.viewport().grab().toImage()
            rect = v.visualRect(v.model().index(row, 0))
            card_right = rect.right() - MARGIN_X
            ink = [(x, y) for y in range(max(rect.top(), 0) + MARGIN_Y + 2,
                                          min(rect.bottom(), image.height() - 1) - MARGIN_Y)
                   for x in range(card_right + 2, min(rect.right(), image.width() - 1))
                   if image.pixelColor(x, y).lightness() < 160]
            # nothing of the text is drawn right of the card's border
            assert not ink, ink[:5]
            # and the card is as tall as its text: its last line is not cut by its border
            bottom = rect.bottom() - MARGIN_Y
            if bottom < image.height() - 2:
                below = [x for x in range(rect.left() + MARGIN_X + 2, card_right - 2)
                         if image.pixelColor(x, bottom + 2).lightness() < 160]
                assert not below, below[:5]
            SHOTS and image.save(str(Path(SHOTS) / "card-text.png"))

    aloop(scenario())
