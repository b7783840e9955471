"""Titles and dates of forks in the app's list (issue 34, item 6), decided by the rule the
CLI's listing uses (forkwise.core.client.titles), on a real Codex home: the forks of a
thread named in `session_index.jsonl` are "<its name> — fork N", and a fork continued in
Codex and read back lists under that name, dated when it was written, not in 2025."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from codex_fixtures import basic, name_thread, thread_id
from gui_harness import open_app, until

from forkwise.core.client.rows import session_row
from forkwise.core.client.titles import titles
from forkwise.gui.models.session_rows import ACTIVITY, TITLE, format_when

pytestmark = pytest.mark.gui


def test_forks_of_a_named_thread_and_its_continuation_read_as_such(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(home))
    path = basic(70).write(home)
    name_thread(home, thread_id(70), "Parser work")
    source = f"codex-{thread_id(70)}"

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            c, tree = app.controller, app.controller.tree
            report = await app.client.import_files([str(path)])
            assert not report["failed"], report
            await until(lambda: source in tree.session_ids(), what="the thread")
            one = (await app.client.fork_at(source, end=True))["id"]
            two = (await app.client.fork_at(source, end=True))["id"]
            await until(lambda: {one, two} <= set(tree.session_ids()), what="the forks")
            await app.idle()
            assert tree.title_of(one) == "Parser work — fork 1"
            assert tree.title_of(two) == "Parser work — fork 2"
            sent = await app.client.export_session(one, "codex")
            report = await app.client.import_files([str(home)], "codex")
            assert not report["failed"], report
            back = await until(lambda: next(
                (s for s in tree.session_ids()
                 if (tree.summary(s) or {}).get("relation") == "continued"), None),
                what="the continuation read back")
            await app.idle()
            assert sent["path"]
            assert tree.parent_of(back) == one
            # it read "list the files — continued in Codex": the fork's stored title
            assert tree.title_of(back) == "Parser work — fork 1 — continued in Codex"
            index = tree.index_for(back)
            shown = index.siblingAtColumn(TITLE).data()
            assert shown == tree.title_of(back)
            # dated when it was written: today's time, not the copied lines' 2025 date
            when = index.siblingAtColumn(ACTIVITY).data()
            # made today, not at its copied 2025 lines: today's date and time, no year
            assert when[:6] == format_when(datetime.now(UTC).isoformat())[:6], when
            assert re.fullmatch(r"\d\d [A-Z][a-z]{2} \d\d:\d\d", when), when
            # the CLI's listing names them by the same rule
            named = titles(session_row(r) for r in c.client.catalogue.values())
            assert named[back] == tree.title_of(back)
            assert named[two] == "Parser work — fork 2"

    aloop(scenario())
