"""The benchmark suite runs (a smoke, not a timing check) and its synthetic stores are
valid logs that the real store loads, lists and forks."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.__main__ import FIGURE_GROUPS
from forkwise.core.bench.synth import write_store
from forkwise.core.log.turns import last_completed_turn
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore


def test_synthetic_store_is_valid_and_forkable(tmp_path: Path) -> None:
    write_store(tmp_path, sessions=12, events_per_session=300)
    store = SessionStore(JsonlBackend(tmp_path))
    rows = store.list()
    assert len(rows) == 12
    assert all(r.error is None for r in rows)
    assert all(r.events >= 299 and r.turns > 0 and r.messages > 0 for r in rows)
    session = store.get(rows[0].id)
    boundary = last_completed_turn(session.events)
    assert boundary is not None
    child = store.fork(session, boundary)
    assert child.events[:boundary] == session.events[:boundary]
    store.close()


HAVE_QT = all(importlib.util.find_spec(m) for m in ("PySide6", "qasync"))
CORE_FIGURES = {"list", "list-cli", "list-rebuild", "fork", "fork-no-index", "fork-open", "replay",
                "context", "first-delta", "first-delta-fold", "context-fold", "context-cold",
                "append", "append-host", "search", "search-build", "search-after-import",
                "import", "import-floor", "import-cpu", "import-durable-cpu", "import-codex",
                "import-codex-floor", "import-codex-cpu", "import-codex-durable-cpu",
                "import-gemini", "import-gemini-floor", "import-gemini-cpu",
                "import-gemini-durable-cpu", "import-opencode", "import-opencode-cpu",
                "reimport-gemini", "reimport-opencode", "reimport", "reimport-cli", "export-html",
                "list-unindexed-1st", "list-unindexed-2nd", "context-unindexed-2nd",
                "export-html-cpu", "export-md", "export-md-cpu", "idle-watch", "rewinds-store",
                "rewinds-rss", "rewinds-pi-store", "rewinds-pi-rss"}
#: every group but the GUI's, whose one run is tests/gui/app/test_perf_smoke.py (where Qt is)
NOT_GUI = [group for group in FIGURE_GROUPS if group != "gui"]


def quick_run(*only: str) -> tuple[dict[str, dict[str, object]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.bench", "--quick", "--json", "--repeat", "1",
         *(arg for group in only for arg in ("--only", group))],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    figures = {f["name"]: f for f in orjson.loads(done.stdout)}
    for f in figures.values():
        # an idle watcher's CPU may round to nothing: that is its target
        assert f["ours"] > 0 or (f["name"] == "idle-watch" and f["ours"] == 0)
        assert f["baseline"] > 0
        assert abs(f["ratio"] - f["ours"] / f["baseline"]) < 1e-9
        assert f["baseline_name"]
    return figures, done.stderr


def test_quick_run_reports_every_figure_with_a_baseline() -> None:
    figures, _ = quick_run(*NOT_GUI)
    assert set(figures) == CORE_FIGURES


@pytest.mark.skipif(HAVE_QT, reason="the GUI figures are measured in tests/gui/app/test_perf_smoke.py")
def test_without_qt_the_gui_figures_are_skipped_and_said_so() -> None:
    figures, stderr = quick_run("gui")
    assert "GUI figures skipped" in stderr
    assert figures == {}
