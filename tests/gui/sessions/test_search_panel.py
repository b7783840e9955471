"""Search everything: Ctrl+Shift+F opens the panel, a word found in an imported session
lists it (session, time, snippet), and activating the hit opens that session at that
message; the filter box still filters the tree by title."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gui_harness import App, open_app, until
from PySide6.QtCore import QRect, Qt

from forkwise.gui.sessions.search_results import HIT_ROLE, group_html

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")
TS = "2026-01-02T09:30:00.000Z"


def imported_log(path: Path, turns: int) -> None:
    """A long Forkwise log outside the store, with one rare word deep inside it."""
    import orjson

    header = {"type": "session", "version": 1, "id": "nightly-notes", "created": TS,
              "cwd": "/work", "parentSession": None, "seedLength": 0,
              "meta": {"title": "Nightly build notes"}}
    records: list[dict[str, Any]] = []

    def add(etype: str, **fields: Any) -> None:
        records.append({"seq": len(records) + 1, "type": etype, "ts": TS, **fields})

    for n in range(turns):
        t = f"turn:{n}"
        word = "the flamingo checksum broke" if n == 100 else f"routine build number {n}"
        add("turn/start", turn=t)
        add("message", id=f"user:q{n}:0001", role="user", turn=t,
            parts=[{"type": "text", "text": f"What happened in {word}?"}])
        add("message", id=f"assistant:a{n}:0002", role="assistant", turn=t,
            parts=[{"type": "text", "text": f"Looked at it: {word}. " + "More detail. " * 30}])
        add("turn/end", turn=t, status="completed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in [header, *records]) + b"\n")


def row_in_view(app: App, row: int) -> bool:
    view = app.window.transcript
    rect = view.visualRect(app.controller.transcript.index(row))
    return rect.isValid() and view.viewport().rect().intersects(QRect(rect))


def test_search_finds_a_word_in_an_imported_session_and_opens_it_there(
        aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    source = tmp_path / "elsewhere" / "nightly.jsonl"
    imported_log(source, 120)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            report = await app.client.import_files([str(source)], tool="forkwise")
            assert report["failed"] == []
            sid = (report["imported"] or report["updated"])[0]
            await until(lambda: sid in app.controller.tree.session_ids(), what="imported")
            w = app.window
            assert not w.search_page.isVisible()
            w.setFocus()
            qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier
                           | Qt.KeyboardModifier.ShiftModifier)
            await until(w.search_page.isVisible, what="the panel shown")
            panel = w.search_panel
            assert panel.objectName() == "searchPanel"
            assert panel.box.hasFocus()
            qtbot.keyClicks(panel.box, "flamingo")
            model = panel.model
            await until(lambda: len(model.hits) == 2, what="two hits")
            hits = [model.index(model.hit_row(n)).data(HIT_ROLE) for n in range(2)]
            assert {h["sessionId"] for h in hits} == {sid}
            assert {h["kind"] for h in hits} == {"user", "assistant"}
            assert all("«flamingo»" in h["snippet"] for h in hits)
            # the session's title once, over its two hits
            assert model.rowCount() == 3
            assert model.index(0).data(Qt.ItemDataRole.DisplayRole) == (
                "Nightly build notes: 2 hits")
            shown = model.index(1).data(Qt.ItemDataRole.DisplayRole)
            assert "Nightly build notes" not in shown
            assert "flamingo" in shown
            assert "2 found in 1 session" in panel.status.text()
            await app.idle()
            if SHOTS:
                w.resize(1280, 800)
                await app.idle()
                w.grab().save(str(Path(SHOTS) / "search-panel.png"))

            user_hit = next(r for r in range(1, 3)
                            if model.index(r).data(HIT_ROLE)["kind"] == "user")
            wanted = model.index(user_hit).data(HIT_ROLE)
            panel.results.setFocus()
            panel.results.setCurrentIndex(model.index(user_hit))
            qtbot.keyClick(panel.results, Qt.Key.Key_Return)
            transcript = app.controller.transcript
            await until(lambda: app.controller.current == sid and transcript.rowCount() > 0
                        and not transcript.fetching, what="the session opened")
            await app.idle()
            current = w.transcript.currentIndex().row()
            entry = transcript.entry(current)
            assert entry is not None
            assert entry.message_id == wanted["messageId"]
            assert "flamingo" in entry.text
            assert transcript.base > 0  # opened there, not at the start of 480 events
            await until(lambda: row_in_view(app, current), what="the message in view")
            assert w.selected_session() == sid
            if SHOTS:
                w.grab().save(str(Path(SHOTS) / "search-opened-at-message.png"))

            # the filter box still filters the tree by title
            w.filter_box.setText("Nightly build")
            await until(lambda: app.controller.proxy.rowCount() == 1, what="filtered")

    aloop(scenario())


def test_nothing_found_says_so(aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            app.window.show_search()
            panel = app.window.search_panel
            panel.box.setText("zzyzx")
            panel.run()
            await until(lambda: "Nothing found" in panel.status.text(), what="the answer")
            assert panel.model.rowCount() == 0
            panel.box.setText("release")
            panel.run()
            await until(lambda: panel.model.rowCount() > 0, what="demo hits")
            titles = {h["title"] for h in panel.model.hits}
            assert "Plan the 2.5 release" in titles

    aloop(scenario())


def test_enter_asks_again_when_nothing_was_found(aloop: Any, qtbot: Any, tmp_path: Path) -> None:
    """Searched while the agents' sessions were still coming in (the first start), the
    words found nothing; once the session is in, Enter in the box finds it (it did
    nothing: the words had to be changed to be asked again)."""
    source = tmp_path / "elsewhere" / "nightly.jsonl"
    imported_log(source, 120)

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            app.window.show_search()
            panel = app.window.search_panel
            qtbot.keyClicks(panel.box, "flamingo")
            qtbot.keyClick(panel.box, Qt.Key.Key_Return)
            await until(lambda: "Nothing found" in panel.status.text(), what="nothing yet")
            report = await app.client.import_files([str(source)], tool="forkwise")
            assert report["failed"] == []
            qtbot.keyClick(panel.box, Qt.Key.Key_Return)
            await until(lambda: len(panel.model.hits) == 2, what="found now")
            assert "2 found" in panel.status.text()
            assert panel.box.hasFocus()  # found: a second Enter goes to the hits
            qtbot.keyClick(panel.box, Qt.Key.Key_Return)
            assert panel.results.hasFocus()

    aloop(scenario())


def test_a_hit_names_its_session_as_the_list_does(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Words asked in a fork, and in the session that fork was continued as in Codex (a
    Continue in read back): their hits are named as the list names them ("… — fork 1",
    "Continued in Codex"), not each by the source's title they all carry."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            c = app.controller
            plan = app.sid("Plan the 2.5 release")
            fork = (await app.client.fork(plan))["id"]
            await app.open(fork)
            c.send("what about the pelican rollout?", lambda: None)
            await until(lambda: app.rows("assistant", "pelican"), what="answered")
            made = await app.client.export_session(fork, "codex")
            report = await app.client.import_files([made["path"]], tool="codex")
            (back,) = report["imported"]
            await until(lambda: back in c.tree.session_ids(), what="read back")
            assert (c.tree.summary(back) or {})["relation"] == "continued"
            app.window.show_search()
            panel = app.window.search_panel
            panel.box.setText("pelican")
            panel.run()
            await until(lambda: len(panel.model.hits) >= 4, what="hits")
            hits = panel.model.hits
            assert {h["sessionId"] for h in hits} == {fork, back}
            for h in hits:
                assert h["title"] == c.tree.title_of(h["sessionId"])
            for group in panel.model.groups:
                shown = group_html(group, panel.palette())
                assert ("Continued in Codex" in shown) == (group.session_id == back)
                assert group.title == c.tree.title_of(group.session_id)
            named = c.tree.title_of(fork)
            assert named.startswith("Plan the 2.5 release — fork ")
            assert {h["title"] for h in hits if h["sessionId"] == fork} == {named}

    aloop(scenario())
