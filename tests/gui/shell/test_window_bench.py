"""The window's interface for features (gui/shell/bench): menus as data (menu id, group,
order), the actions that need a session, a line under the title, and the feature list the
app installs — over a real window, client and in-process host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QMenu, QVBoxLayout

from forkwise.gui.app.features import FEATURES
from forkwise.gui.shell.bench import ActionSpec, Bench, MenuId, Place
from forkwise.gui.shell.main_window import MainWindow

pytestmark = pytest.mark.gui

PLAN = "Plan the 2.5 release"


def entries(menu: QMenu) -> list[str]:
    """A menu's entries as a person reads them: texts, "—" for a separator."""
    return ["—" if a.isSeparator() else a.text() for a in menu.actions()]


def test_the_menus_are_filled_from_their_entries_in_group_and_order(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.install_agents()
            assert entries(w.menus[MenuId.FILE]) == [
                "&New session", "&Export session…", "&Import sessions…", "Agent &sources…", "—",
                "&Preferences…", "—", "&Quit"]
            assert entries(w.menus[MenuId.SESSION]) == [
                "&Fork", "&Rename…", "—", "&Previous fork", "Next f&ork", "&Compare…", "—",
                "&Stop", "Use the &model from Preferences", "—", "&Approve tool call",
                "D&eny tool call", "—", "D&uplicate session", "&Delete session", "&Trash…",
                "—", "Continue &in"]
            assert entries(w.menus[MenuId.EDIT])[:3] == [
                "&Undo", "—", "Find in &session…"]
            # a feature's entry goes where its place says, between the window's own
            bench: Bench = w
            fired: list[str] = []
            bench.add_action(ActionSpec("actionProbe", "Pro&be", "A probe", None,
                                        (Place(MenuId.SESSION, 1, 15),),
                                        lambda: fired.append("probe"), needs_session=True))
            session = entries(w.menus[MenuId.SESSION])
            assert session[3:7] == ["&Previous fork", "Pro&be", "Next f&ork", "&Compare…"]
            bench.action("actionProbe").trigger()
            assert fired == ["probe"]
            # the session list's menu is filled from its own entries when it opens
            tree = w.tree
            index = tree.model().index(0, 0)
            menu = tree.build_context_menu(index)
            assert entries(menu) == ["&Fork", "&New session", "&Rename…", "&Compare…",
                                     "D&uplicate session", "&Delete session", "—",
                                     "Copy session id"]

    aloop(scenario())


def test_actions_that_need_a_session_follow_the_selection(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            probe = w.add_action(ActionSpec("actionProbe", "Probe", "A probe",
                                            needs_session=True))
            w.tree.setCurrentIndex(w.tree.model().index(-1, -1))
            await until(lambda: w.selected_session() is None, what="nothing selected")
            assert not probe.isEnabled()
            assert not w.action_delete.isEnabled()
            await app.open(app.sid(PLAN))
            assert probe.isEnabled()
            assert w.action_delete.isEnabled()

    aloop(scenario())


def test_a_detail_line_goes_under_the_title_and_above_the_transcript(
        aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            w = app.window
            w.install_agents()  # the origin line (the agents' feature) and the banner
            line = QLabel("probe line", w)
            w.add_detail_line(line)
            layout = w.header_label.parentWidget().layout()
            assert isinstance(layout, QVBoxLayout)
            order = [layout.itemAt(i).widget() for i in range(layout.count())]
            title = order.index(w.header_label)
            origin = w.findChild(QLabel, "originLabel")
            # the branches feature's line (which model answers a fork) comes first: it
            # is installed before the agents' feature
            answer = w.findChild(QLabel, "answeringModel")
            assert order[title + 1:title + 5] == [answer, origin, line, w.transcript]
            # the banner is in no place of the layout: it floats over the transcript's top
            assert w.banner not in order
            assert w.banner.over is w.transcript

    aloop(scenario())


def test_the_window_stands_without_features_and_installs_the_apps_list(
        aloop: Any, tmp_path: Path) -> None:
    """The shell imports no feature: a window given none has the window's own actions
    only; the app's list puts each feature's object in `features` by its name."""

    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            assert [f.name for f in FEATURES] == list(app.window.features)
            settings = QSettings(str(tmp_path / "bare.ini"), QSettings.Format.IniFormat)
            bare = MainWindow(app.controller, settings)
            try:
                bare.install_agents()
                assert bare.features == {}
                assert entries(bare.menus[MenuId.FILE]) == [
                    "&New session", "—", "&Preferences…", "—", "&Quit"]
                assert "&Rename…" not in entries(bare.menus[MenuId.SESSION])
                assert "&Rename…" in entries(app.window.menus[MenuId.SESSION])
            finally:
                bare.close()
                bare.deleteLater()

    aloop(scenario())
