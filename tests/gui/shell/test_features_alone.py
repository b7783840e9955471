"""Each feature under gui/features, built alone: installed through the window's interface
on a `FeatureBench` (tests/gui/feature_bench.py) over the real client of an in-process
host, with no main window and no other feature. What each does is seen in the store, the
tree and the feature's own widgets. (Their wiring through the whole app is tested in the
app's tests: test_app, test_branches, test_ux_*.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from feature_bench import Rig, feature_alone
from polling import until
from PySide6.QtWidgets import QDialog

from forkwise.gui.features.agents import agents
from forkwise.gui.features.branches import branch_actions
from forkwise.gui.features.housekeeping import housekeeping
from forkwise.gui.features.preferences import settings_dialog
from forkwise.gui.features.reading import reading

pytestmark = pytest.mark.gui


def sid_of(rig: Rig, title: str) -> str:
    tree = rig.controller.tree
    return next(sid for sid in rig.sessions() if tree.title_of(sid) == title)


def test_housekeeping_duplicates_deletes_and_offers_the_approval_alone(
    aloop: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with feature_alone(tmp_path, housekeeping.install) as rig:
            bench, c = rig.bench, rig.controller
            plan = sid_of(rig, "Plan the 2.5 release")
            await rig.open(plan)
            before = set(rig.sessions())
            bench.action(housekeeping.DUPLICATE).trigger()
            (copy,) = await until(lambda: set(rig.sessions()) - before, what="the copy")
            row = c.tree.summary(copy)
            assert row is not None
            assert row["parentSession"] == plan
            # a copy of the whole session: a fork at its last event
            assert row["seedLength"] == len(await rig.client.events(plan))
            # Approve and Deny follow what the opened session waits for
            assert bench.transcript is not None  # (the feature watches the built view)
            assert not bench.action(housekeeping.APPROVE).isEnabled()
            await rig.open(sid_of(rig, "Clean up the build folder"))
            await until(bench.action(housekeeping.APPROVE).isEnabled, what="Approve enabled")
            assert rig.installed.pending_approval() is not None
            await rig.open(copy)
            bench.action(housekeeping.DELETE).trigger()
            await until(lambda: copy not in rig.sessions(), what="the copy deleted")
            assert copy not in [r["id"] for r in await rig.client.list_sessions()]

    aloop(scenario())


def test_branches_renames_through_the_one_change_signal_and_compares_alone(
    aloop: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with feature_alone(tmp_path, branch_actions.install) as rig:
            c = rig.controller
            plan = sid_of(rig, "Plan the 2.5 release")
            child = sid_of(rig, "2.5 release — two-week schedule")
            await rig.open(child)
            changed: list[str] = []
            c.sessionChanged.connect(changed.append)
            rig.installed.rename_to(child, "Two weeks it is")
            await until(lambda: c.tree.title_of(child) == "Two weeks it is", what="renamed")
            assert child in changed
            listed = {r["id"]: r for r in await rig.client.list_sessions()}
            assert listed[child]["title"] == "Two weeks it is"
            rig.installed.compare_with_source()
            await until(lambda: rig.installed.compare_view is not None
                        and rig.installed.compare_view.isVisible(), what="Compare shown")
            assert rig.installed.compare_view.sessions == (plan, child)

    aloop(scenario())


def test_preferences_shows_the_hosts_settings_alone(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))

    async def scenario() -> None:
        async with feature_alone(tmp_path, settings_dialog.install) as rig:
            await rig.client.save_settings({"kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                                            "model": "tiny-model", "reasoning_effort": None})
            rig.bench.action(settings_dialog.PREFERENCES).trigger()
            dialog = rig.bench.findChild(QDialog, "settingsDialog")
            assert dialog is not None
            await until(lambda: dialog.isVisible() and dialog.model.text() == "tiny-model",
                        what="the host's settings in the dialog")
            assert dialog.kind.currentData() == "openai"
            assert dialog.base_url.text() == "http://127.0.0.1:9/v1"

    aloop(scenario())


def test_reading_exports_the_selected_session_alone(aloop: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with feature_alone(tmp_path, reading.install) as rig:
            plan = sid_of(rig, "Plan the 2.5 release")
            await rig.open(plan)
            target = tmp_path / "plan.md"
            rig.installed.write(plan, str(target))
            await until(lambda: rig.installed.exported == str(target), what="exported")
            text = target.read_text()
            assert "Plan the 2.5 release" in text
            first = next(e for e in await rig.client.messages(plan) if e["role"] == "user")
            assert first["text"].strip().splitlines()[0] in text

    aloop(scenario())


def test_agents_names_where_an_imported_session_came_from_alone(
    aloop: Any, tmp_path: Path
) -> None:
    from claude_fixtures import SID, Transcript

    chat = Transcript(SID)
    chat.exchange("hello", "hi")
    path = chat.write(tmp_path / "claude" / f"{SID}.jsonl")

    async def scenario() -> None:
        async with feature_alone(tmp_path, agents.install) as rig:
            report = await rig.client.import_files([str(path)], tool="claude")
            (sid,) = report["imported"]
            await until(lambda: sid in rig.sessions(), what="the imported row")
            await rig.open(sid)
            (origin,) = [w for w in rig.bench.detail_lines if w.objectName() == "originLabel"]
            await until(origin.isVisible, what="the origin line")
            assert origin.text() == f"Imported from Claude Code: {path}"
            assert rig.bench.findChild(QDialog, "importDialog") is None
            assert rig.bench.action("actionImport").isEnabled()

    aloop(scenario())
