"""The search panel's hits grouped by session (each title once), narrowed by agent, date
and role, their snippets plain words (no Markdown, tags or JSON), and an opened hit's
words marked in the transcript. Real store, a real-format Claude Code file and Forkwise
logs imported through the app's client."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import orjson
import pytest
from gui_harness import App, open_app, until
from PySide6.QtCore import Qt

from forkwise.gui.domain.search_hits import clean_snippet, marked_words
from forkwise.gui.sessions.search_results import GROUP_ROLE, HIT_ROLE
from forkwise.gui.transcript.transcript_delegate import CURRENT

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
CLAUDE_SID = "6e1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d60"


@pytest.mark.parametrize(("snippet", "shown"), [
    ("Where is the **«pelican»** config?", "Where is the «pelican» config?"),
    ("…see `«pelican».toml` and [the docs](https://x.org/a) now",
     "…see «pelican».toml and the docs now"),
    ("<command-message>init is analyzing</command-message> <command-name>/«init»"
     "</command-name>", "init is analyzing /«init»"),
    ('Bash {"command":"grep -r «pelican» src","description":"Find it\\nquickly"}',
     "Bash command: grep -r «pelican» src, description: Find it quickly"),
    ("## Plan | step | file | |---|---| | one | «pelican».py |",
     "Plan · step · file · one · «pelican».py"),
    ("keep snake_case and 2*3 as they are, «pelican»", "keep snake_case and 2*3 as they are,"
     " «pelican»"),
])
def test_a_snippet_reads_as_plain_words(snippet: str, shown: str) -> None:
    assert clean_snippet(snippet) == shown


def test_the_words_a_hit_found() -> None:
    assert marked_words("the «Pelican» and «pelican» «nest»s") == ["pelican", "nest"]


def forkwise_log(path: Path, sid: str, title: str, ts: str, said: list[tuple[str, str]],
                 *, cwd: str = "/work") -> None:
    header = {"type": "session", "version": 1, "id": sid, "created": ts, "cwd": cwd,
              "parentSession": None, "seedLength": 0, "meta": {"title": title}}
    records: list[dict[str, Any]] = []

    def add(etype: str, **fields: Any) -> None:
        records.append({"seq": len(records) + 1, "type": etype, "ts": ts, **fields})

    for n, (question, answer) in enumerate(said):
        turn = f"turn:{n}"
        add("turn/start", turn=turn)
        add("message", id=f"user:q{n}:0001", role="user", turn=turn,
            parts=[{"type": "text", "text": question}])
        add("message", id=f"assistant:a{n}:0002", role="assistant", turn=turn,
            parts=[{"type": "text", "text": answer}])
        add("turn/end", turn=turn, status="completed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in [header, *records]) + b"\n")


async def imported(app: App, root: Path) -> dict[str, str]:
    """Three sessions that mention the pelican: a recent Forkwise log, an old one, and a
    Claude Code session (January)."""
    recent = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    forkwise_log(root / "logs" / "recent.jsonl", "recent-notes", "Recent notes", recent, [
        ("Where is the **pelican** config?",
         "The `pelican` config is in <command-name>/setup</command-name> and "
         "[the docs](https://example.org/pelican)."),
        ("Anything else?", "Nothing about birds.")])
    forkwise_log(root / "logs" / "old.jsonl", "old-notes", "Old notes",
                 "2025-03-01T10:00:00.000Z", [("Old question", "An old pelican answer.")],
                 cwd="/srv/birds")
    t = cf.Transcript(CLAUDE_SID)
    t.user("find the pelican in `src/app.py`")
    t.assistant([{"type": "text", "text": "It is on line 3."}])
    claude = t.write(cf.project_file(root / "claude", t))
    os.utime(claude, (1_700_000_000, 1_700_000_000))
    ids: dict[str, str] = {}
    for path, tool in ((root / "logs" / "recent.jsonl", "forkwise"),
                       (root / "logs" / "old.jsonl", "forkwise"), (root / "claude", None)):
        report = await app.client.import_files([str(path)], tool=tool)
        assert not report["failed"], report
        ids[path.name] = (report["imported"] or report["updated"])[0]
    await until(lambda: all(s in app.controller.tree.session_ids() for s in ids.values()),
                what="imported")
    await app.idle()
    return ids


def rows(panel: Any) -> list[tuple[str, Any]]:
    model = panel.model
    out = []
    for r in range(model.rowCount()):
        group = model.index(r).data(GROUP_ROLE)
        out.append(("group", group.title) if group is not None
                   else ("hit", model.index(r).data(HIT_ROLE)))
    return out


async def searched(app: App, words: str) -> Any:
    app.window.show_search()
    panel = app.window.search_panel
    panel.box.setText(words)
    panel.run()
    await until(lambda: panel.model.hits, what="hits")
    return panel


def test_hits_are_grouped_by_session_and_narrowed_by_agent_date_role_and_folder(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            ids = await imported(app, tmp_path / "in")
            panel = await searched(app, "pelican")
            shown = rows(panel)
            titles = [title for kind, title in shown if kind == "group"]
            assert set(titles) == {"Recent notes", "Old notes",
                                   app.controller.tree.title_of(ids["claude"])}
            assert len(titles) == len(set(titles)) == 3  # each session once
            # every hit sits under its own session's header
            current = None
            for kind, value in shown:
                if kind == "group":
                    current = value
                else:
                    assert app.controller.tree.title_of(value["sessionId"]) == current
            # the snippets are plain words
            for r in range(panel.model.rowCount()):
                text = panel.model.index(r).data(Qt.ItemDataRole.DisplayRole)
                if panel.model.index(r).data(GROUP_ROLE) is None:
                    for markup in ("**", "`", "<command", "](", "«"):
                        assert markup not in text, text
            assert "in 3 sessions" in panel.status.text()
            if SHOTS:
                app.window.resize(1280, 800)
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "search-grouped.png"))

            def sessions() -> set[str]:
                return {h["sessionId"] for h in panel.model.hits}

            panel.agent.setCurrentIndex(panel.agent.findData("claude"))
            assert sessions() == {ids["claude"]}
            panel.agent.setCurrentIndex(panel.agent.findData("forkwise"))
            assert sessions() == {ids["recent.jsonl"], ids["old.jsonl"]}
            panel.date.setCurrentIndex(panel.date.findData(7))
            assert sessions() == {ids["recent.jsonl"]}
            panel.role.setCurrentIndex(panel.role.findData("assistant"))
            assert [h["kind"] for h in panel.model.hits] == ["assistant"]
            panel.agent.setCurrentIndex(panel.agent.findData("codex"))
            assert panel.model.rowCount() == 0
            assert "none with these filters" in panel.status.text()
            panel.agent.setCurrentIndex(0)
            panel.date.setCurrentIndex(0)
            panel.role.setCurrentIndex(0)
            assert len(sessions()) == 3
            # the folder filter offers the found sessions' folders, by name, whole in the tip
            claude_cwd = app.controller.tree.summary(ids["claude"])["cwd"]  # type: ignore[index]
            offered = [panel.folder.itemData(i) for i in range(panel.folder.count())]
            assert offered == [None, *sorted({"/work", "/srv/birds", claude_cwd})]
            birds = panel.folder.findData("/srv/birds")
            assert panel.folder.itemText(birds) == "birds"
            assert panel.folder.itemData(birds, Qt.ItemDataRole.ToolTipRole) == "/srv/birds"
            panel.folder.setCurrentIndex(birds)
            assert sessions() == {ids["old.jsonl"]}
            panel.folder.setCurrentIndex(panel.folder.findData("/work"))
            assert sessions() == {ids["recent.jsonl"]}
            panel.folder.setCurrentIndex(0)
            assert len(sessions()) == 3

    aloop(scenario())


def test_an_opened_hit_has_its_words_marked_in_the_transcript(
        aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            ids = await imported(app, tmp_path / "in")
            panel = await searched(app, "pelican")
            model = panel.model
            row = next(r for r in range(model.rowCount())
                       if model.index(r).data(GROUP_ROLE) is None
                       and model.index(r).data(HIT_ROLE)["sessionId"] == ids["recent.jsonl"]
                       and model.index(r).data(HIT_ROLE)["kind"] == "assistant")
            panel.results.setFocus()
            panel.results.setCurrentIndex(model.index(row))
            qtbot.keyClick(panel.results, Qt.Key.Key_Return)
            transcript = app.controller.transcript
            await until(lambda: app.controller.current == ids["recent.jsonl"]
                        and transcript.rowCount() > 0 and not transcript.fetching,
                        what="the session opened")
            await app.idle()
            view = app.window.transcript
            (answer,) = app.rows("assistant", "config is in")
            index = transcript.index(answer)
            view.scrollTo(index)
            await until(lambda: view.visualRect(index).isValid(), what="answer shown")

            def marked() -> int:
                rect = view.visualRect(index)
                shot = view.viewport().grab().toImage()
                return sum(1 for y in range(max(0, rect.top()), min(rect.bottom(), shot.height()))
                           for x in range(max(0, rect.left()), min(rect.right(), shot.width()), 2)
                           if shot.pixelColor(x, y) == CURRENT)

            await until(lambda: marked() > 20, what="the hit's words marked")
            # only the hit's message: the question above says pelican too, unmarked
            (question,) = app.rows("user", "Where is the")
            assert view.delegate._hit_marks(app.entries[question],
                                            view.delegate.card_doc(transcript.index(question))
                                            ) == []
            if SHOTS:
                app.window.grab().save(str(Path(SHOTS) / "search-hit-marked.png"))
            # another session shows no marks
            await app.open(ids["old.jsonl"])
            (old,) = app.rows("assistant", "old pelican")
            assert view.delegate._hit_marks(app.entries[old],
                                            view.delegate.card_doc(transcript.index(old))) == []

    aloop(scenario())
