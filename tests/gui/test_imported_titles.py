"""Imported sessions in the tree and the transcript (issue 19's walk): sibling branches of
a Claude Code session renamed after they left it, and a Codex fork of a named thread, read
as forks ("<title> — fork N"), not as the first question they share; a transcript does not
open with a title row that repeats the question under it. Real files, real app."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
import claude_fixtures as cf
from codex_fixtures import home_with_fork, thread_id

from forkwise.gui.transcript_entries import TITLE

pytestmark = pytest.mark.gui
SHOTS = os.environ.get("FORKWISE_SHOTS")

SID = "3a9c0d1e-2222-4b6a-9e7d-0a1b2c3d4e5f"
QUESTION = "Why does the release build fail on macOS?"


def claude_rewound_twice(root: Path) -> Path:
    """Asked, rewound twice to after the first answer (three ways on from one point),
    then renamed: Claude Code writes the custom title after the last branch's entries."""
    t = cf.Transcript(SID, cwd="/home/ada/work/app")
    t.exchange(QUESTION, "Let me read the build log.")
    fork_at = t.last
    t.exchange("check the signing step", "The certificate expired.")
    t.last = fork_at
    t.exchange("check the SDK version", "The SDK is too old.")
    t.last = fork_at
    t.exchange("check the linker flags", "A flag is missing.")
    t.custom_title("Release build on macOS")
    return cf.write_old(t, root)


def test_sibling_branches_of_imported_sessions_read_as_forks(
        aloop: Any, tmp_path: Path) -> None:
    path = claude_rewound_twice(tmp_path / "claude")
    codex = home_with_fork(tmp_path / "codex")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            files = [path, *sorted((codex / "sessions").rglob("rollout-*.jsonl"))]
            report = await app.client.import_files([str(p) for p in files])
            assert not report["failed"], report
            tree = app.controller.tree
            main = f"claude-{SID}"
            await until(lambda: main in tree.session_ids(), what="imported rows")
            await app.idle()
            branches = [s for s in tree.session_ids()
                        if (tree.summary(s) or {}).get("parentSession") == main]
            assert len(branches) == 2
            titles = sorted(tree.title_of(s) for s in branches)
            # the branches were named by the question they share with the main line
            assert titles == ["Release build on macOS — fork 1",
                              "Release build on macOS — fork 2"], titles
            assert tree.title_of(main) == "Release build on macOS"
            fork = f"codex-{thread_id(2)}"
            assert tree.title_of(fork) == "Fix the parser bug — fork 1"
            if SHOTS:
                app.window.tree.expandAll()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "imported-branch-titles.png"))

    aloop(scenario())


def test_an_imported_transcript_shows_no_title_row_repeating_its_first_question(
        aloop: Any, tmp_path: Path) -> None:
    path = claude_rewound_twice(tmp_path / "claude")

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            main = f"claude-{SID}"
            await until(lambda: main in app.controller.tree.session_ids(), what="rows")
            await app.open(main)
            model = app.window.transcript.model()
            await until(lambda: model.rowCount() > 0, what="transcript rows")
            await app.idle()
            entries = model.builder.entries
            titles = [e.text for e in entries if e.kind == TITLE]
            # the importer titled the session by its first question before the rename:
            # that row said nothing the question below it does not
            assert titles == ["Release build on macOS"], titles
            assert entries[0].text == QUESTION
            if SHOTS:
                app.window.transcript.scrollToTop()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "imported-no-title-row.png"))

    aloop(scenario())
