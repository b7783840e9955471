"""The agents in the app: File → Import… brings a Codex home in as a lineage tree, the
agents' folders are kept up with while the app is open, and Continue in writes a fork back
for the agent with the command that resumes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from codex_fixtures import home_with_fork, thread_id
from gui_harness import agents_home, open_app, until
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit

from forkwise.gui.features.agents.continue_in import ContinueDialog
from forkwise.gui.features.agents.import_dialogs import ImportDialog
from forkwise.gui.models.session_rows import ID_ROLE

pytestmark = pytest.mark.gui


def codex_home(root: Path) -> Path:
    return home_with_fork(root / "codex-home")


def dialog_of(kind: type) -> Any:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
    return found[-1] if found else None


def test_import_dialog_brings_a_codex_home_in_as_a_lineage_tree(
    aloop: Any, tmp_path: Path
) -> None:
    home = codex_home(tmp_path)
    parent, child = f"codex-{thread_id(1)}", f"codex-{thread_id(2)}"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            app.window.findChild(type(app.window.action_new), "actionImport").trigger()
            dialog = await until(lambda: dialog_of(ImportDialog), what="import dialog")
            dialog.tool.setCurrentIndex(dialog.tool.findData("codex"))
            dialog.path.setText(str(home))
            dialog.go.click()
            await until(lambda: "imported" in dialog.summary.text(), what="import summary")
            assert dialog.summary.text().startswith("2 sessions imported")
            tree = app.controller.tree
            await until(lambda: child in tree.session_ids(), what="child row")
            assert (tree.summary(parent) or {})["title"] == "Fix the parser bug"
            assert (tree.summary(child) or {})["parentSession"] == parent
            assert (tree.summary(parent) or {})["source"] == "codex"
            # the child sits beneath its source in the view
            index = tree.reveal(child)
            assert tree.data(index.parent(), ID_ROLE) == parent
            # a second import changes nothing
            dialog.go.click()
            await until(lambda: "unchanged" in dialog.summary.text()
                        or "did not run" in dialog.summary.text(), what="second summary")
            assert dialog.summary.text().startswith("0 sessions imported"), dialog.summary.text()
            dialog.close()

    aloop(scenario())


def test_a_watched_agent_folder_appears_and_continue_in_writes_it_back(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = codex_home(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(home))
    child = f"codex-{thread_id(2)}"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            # the folder exists: the app keeps up with it without being asked
            await until(lambda: child in app.controller.tree.session_ids(), what="watched")
            await app.open(child)
            menu = app.window.findChild(type(app.window.menuBar().actions()[0].menu()),
                                        "menuContinueIn")
            menu.aboutToShow.emit()
            codex = next(a for a in menu.actions() if a.objectName() == "actionContinueCodex")
            assert "where it came from" in codex.text()
            codex.trigger()
            dialog = await until(lambda: dialog_of(ContinueDialog), what="continue dialog")
            command = dialog.findChild(QLineEdit, "resumeCommand").text()
            # in the session's folder first (its tools work there): cd … && codex resume ID
            assert command.startswith("cd "), command
            assert " && codex resume " in command, command
            written = list((home / "sessions").rglob(f"*{command.split()[-1]}.jsonl"))
            assert len(written) == 1
            dialog.close()

    aloop(scenario())


def test_the_app_on_a_home_with_all_three_agents_shows_their_lineage_and_follows_growth(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started on a home holding Claude Code, Codex and pi sessions, the app shows them as
    lineage trees without any command; a session that grows on disk grows in the open
    transcript."""
    import claude_fixtures as cf

    env, chat = agents_home(tmp_path)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    claude = Path(env["CLAUDE_CONFIG_DIR"])

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            tree = app.controller.tree

            def by_tool() -> dict[str, list[dict[str, Any]]]:
                rows = [tree.summary(s) or {} for s in tree.session_ids()]
                out: dict[str, list[dict[str, Any]]] = {}
                for r in rows:
                    root = r
                    while root.get("parentSession"):
                        root = tree.summary(root["parentSession"]) or {}
                    out.setdefault(str(root.get("source")), []).append(r)
                return out

            await until(lambda: {"claude", "codex", "pi"} <= set(by_tool()), what="3 tools")
            await until(lambda: all(len(by_tool()[t]) >= 2 for t in ("claude", "codex", "pi")),
                        what="every agent's fork or branch")
            for tool in ("claude", "codex", "pi"):
                children = [r for r in by_tool()[tool] if r.get("parentSession")]
                assert children, tool
                assert all(r["relation"] == "fork" for r in children), tool
            main = f"claude-{cf.SID}"
            await app.open(main)
            before = app.controller.transcript.rowCount()
            chat.exchange("a question asked in Claude Code just now", "and its answer")
            path = chat.write(cf.project_file(claude, chat))
            import os

            os.utime(path, None)
            await until(lambda: app.controller.transcript.rowCount() > before,
                        what="the open transcript grows")
            assert any("asked in Claude Code just now" in e.text for e in app.entries)

    aloop(scenario())


def test_continue_in_from_a_message_forks_there_and_writes_the_fork(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = codex_home(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(home))
    parent = f"codex-{thread_id(1)}"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await until(lambda: parent in app.controller.tree.session_ids(), what="watched")
            await app.open(parent)
            origin = app.window.findChild(QLabel, "originLabel")
            await until(origin.isVisible, what="origin shown")
            assert origin.text().startswith("Imported from Codex: ")
            assert origin.text().endswith(".jsonl")
            assert str(home) in origin.text()
            # in a narrow window the path's middle gives way: the agent and file stay shown
            app.window.resize(640, 800)
            await until(lambda: origin.shown_text() != origin.text(), what="path elided")
            shown = origin.shown_text()
            assert shown.startswith("Imported from Codex: ")
            assert shown.endswith(".jsonl")
            assert "…" in shown
            app.window.resize(1280, 800)
            before = set(app.controller.tree.session_ids())
            (row, *_rest) = app.rows("user", "list the files")
            menu = app.message_menu(row)
            sub = next(a.menu() for a in menu.actions()
                       if a.menu() is not None and a.menu().objectName() == "messageContinueIn")
            assert sub.isEnabled()
            codex = next(a for a in sub.actions() if a.objectName() == "messageContinueCodex")
            assert "where it came from" in codex.text()
            codex.trigger()
            dialog = await until(lambda: dialog_of(ContinueDialog), what="continue dialog")
            (child,) = set(app.controller.tree.session_ids()) - before
            await until(lambda: app.controller.current == child, what="the fork open")
            await until(lambda: origin.text().startswith("A fork of a Codex session"),
                        what="the fork's origin")
            summary = app.controller.tree.summary(child) or {}
            assert summary["parentSession"] == parent
            assert summary["seedLength"] < (app.controller.tree.summary(parent) or {})["events"]
            command = dialog.findChild(QLineEdit, "resumeCommand").text()
            assert list((home / "sessions").rglob(f"*{command.split()[-1]}.jsonl"))
            written = dialog.findChild(QLineEdit, "writtenPath").text()
            assert Path(written).is_file()
            assert command.split()[-1] in written
            # a long path takes nothing from what follows it: every line is shown whole
            labels = [w for w in dialog.findChildren(QLabel) if w.isVisible()]
            assert [w.text() for w in labels] == ["Written as a Codex session:",
                                                  "Resume it with:"]
            for label in labels:
                assert label.height() >= label.sizeHint().height(), label.text()
            dialog.close()
            # the folder is watched: the file written comes back beneath the fork, as the
            # session the fork was continued as in Codex, not as a session of its own
            back = f"codex-{command.split()[-1]}"
            await until(lambda: back in app.controller.tree.session_ids(), what="read back")
            row = app.controller.tree.summary(back) or {}
            assert (row["parentSession"], row["relation"]) == (child, "continued")
            assert back in app.controller.tree.children_of(child)
            await app.open(back)
            await until(lambda: origin.text().startswith("Continued in Codex: "),
                        what="the continued session's origin")

    aloop(scenario())


def test_a_torn_line_of_an_agent_file_is_named_and_its_session_kept(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agents' folders hold a Claude Code file with a torn line beside a good Codex
    home: the first look brings every session in, the torn file's too (it was left out,
    named in a banner), and says which line of which file it could not read, once."""
    import claude_fixtures as cf

    monkeypatch.setenv("CODEX_HOME", str(codex_home(tmp_path)))
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    chat = cf.Transcript(cf.SID)
    chat.exchange("first question", "first answer")
    chat.exchange("second question", "second answer")
    bad = cf.write_old(chat, claude)
    lines = bad.read_bytes().splitlines(keepends=True)
    bad.write_bytes(b"".join(lines[:2]) + b'{"parentUuid": "x", "type": "us\n' + b"".join(lines[2:]))

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await until(lambda: f"codex-{thread_id(2)}" in app.controller.tree.session_ids(),
                        what="the good sessions")
            warned = await until(lambda: [n for n in app.notifier.history
                                          if n.code == "agent-lines-unreadable"],
                                 what="the unreadable line named")
            (notice,) = warned
            assert notice.level == "warning"
            assert notice.text.startswith("1 line(s) of the agents' session files could not be read")
            assert str(bad) in notice.text
            assert notice.text.count("line 3") == 1, notice.text  # the line named once
            banner = app.window.banner
            assert banner.isVisible()
            assert banner.label.text() == notice.text
            assert f"claude-{cf.SID}" in app.controller.tree.session_ids()
            assert not [n for n in app.notifier.history if n.code == "agent-files-unreadable"]

    aloop(scenario())


def test_comparing_a_codex_rollback_with_its_thread_shows_no_empty_card(
    aloop: Any, tmp_path: Path
) -> None:
    """A thread rolled back twice: compared with the branch the first rollback left, the
    thread's side began with an empty card (its rollback records, kept as plugin events,
    made a note with nothing to say) opposite the branch's fork record."""
    from codex_fixtures import rolled_back_twice
    from PySide6.QtWidgets import QFrame

    from forkwise.gui.features.branches.compare_view import CompareView

    home = tmp_path / "codex-home"
    path = rolled_back_twice(20).write(home)
    main = f"codex-{thread_id(20)}"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(path)], tool="codex")
            assert not report["failed"], report
            tree = app.controller.tree
            await until(lambda: main in tree.session_ids(), what="imported")
            branches = sorted((s for s in tree.session_ids()
                               if (tree.summary(s) or {}).get("parentSession") == main),
                              key=lambda s: (tree.summary(s) or {})["seedLength"])
            app.window.features["branches"].show_compare(main, branches[0])
            view = await until(lambda: dialog_of(CompareView), what="the comparison")
            cells = await until(lambda: [c for c in view.findChildren(QLabel, "compareCell")
                                         if c.isVisible()], what="its cells")
            framed = [c for c in cells if c.frameShape() != QFrame.Shape.NoFrame]
            assert framed
            assert all(c.text().strip() for c in framed), [c.text() for c in framed]
            assert any("Forked from" in c.text() for c in framed)
            view.close()

    aloop(scenario())
