"""The GUI figures of the benchmark suite run at tiny sizes and report well-formed numbers,
and each measuring process printed its own well-formed line (a smoke, never a timing
check). One run of the suite: the lines are the ones it measured."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from forkwise.core.bench.gui_figures import RAW_ENV

pytestmark = pytest.mark.gui

GUI_FIGURES = {"open", "open-rss", "cold-start", "cold-frame", "cold-ready", "tree",
               "tree-rest", "tree-scroll", "tree-scroll-cpu"}


def quick_figures(group: str, raw: Path) -> dict[str, dict[str, Any]]:
    """The figures of one group of the suite at --quick sizes, run once; each measuring
    process's line goes to `raw`."""
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.bench", "--quick", "--json", "--repeat", "1",
         "--only", group],
        capture_output=True, text=True, check=True, timeout=300,
        env={**os.environ, RAW_ENV: str(raw)},
    )
    return {f["name"]: f for f in orjson.loads(done.stdout)}


def test_quick_gui_figures_are_reported_with_baselines(tmp_path: Path) -> None:
    raw = tmp_path / "raw.jsonl"
    figures = quick_figures("gui", raw)
    assert set(figures) == GUI_FIGURES
    for f in figures.values():
        assert f["ours"] > 0, f
        assert f["baseline"] > 0, f
        assert abs(f["ratio"] - f["ours"] / f["baseline"]) < 1e-9
        assert f["baseline_name"]
        assert f["target"]
        assert f["workload"]
    assert figures["open-rss"]["unit"] == "B"
    assert figures["cold-start"]["ours"] >= figures["cold-frame"]["ours"]
    assert figures["cold-ready"]["ours"] >= figures["cold-start"]["ours"]

    lines = [orjson.loads(line) for line in raw.read_bytes().splitlines()]
    by_figure: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        by_figure.setdefault(str(line["figure"]), []).append(line)
    (opened,) = by_figure["open"]
    assert opened["rows"] > 0
    assert opened["events_loaded"] > 0
    assert opened["file_bytes"] == figures["open-rss"]["baseline"]  # the file's size
    assert {"seconds", "rss_before", "rss_growth", "rss_peak_growth"} <= set(opened)
    (tree,) = by_figure["tree"]
    assert tree["sessions"] > 0
    assert 0 < tree["top_rows"] <= tree["sessions"]
    assert tree["rest_seconds"] > 0
    assert len(by_figure["cold"]) == 2  # the warm-up and the measured run
    for cold in by_figure["cold"]:
        assert cold["status"] == 0
        assert cold["tree_rows"] > 0
        assert 0 < cold["painted"] <= cold["tree_painted"] <= cold["ready"]
        assert 0 < cold["painted_cpu"] <= cold["tree_painted_cpu"] <= cold["ready_cpu"]
    assert all(b["painted"] > 0 for b in by_figure["cold-baseline"])


def test_quick_transcript_figures_are_reported(tmp_path: Path) -> None:
    """The transcript figures: a large Claude Code session (1 MB at --quick) opened until
    its first screen is painted, then scrolled from its end, each frame painted."""
    raw = tmp_path / "raw.jsonl"
    figures = quick_figures("transcript", raw)
    assert set(figures) == {"transcript-open", "transcript-open-cpu", "transcript-scroll",
                            "transcript-scroll-median", "transcript-scroll-cpu"}
    for f in figures.values():
        assert f["ours"] > 0, f
        assert f["baseline"] > 0, f
    (line,) = [orjson.loads(x) for x in raw.read_bytes().splitlines()]
    assert line["figure"] == "transcript"
    assert line["rows"] > 0
    assert line["scroll_frames"] > 0
    assert line["scroll_frame_median"] <= line["scroll_frame_max"]
    assert line["gui_cpu_seconds"] > 0


def test_quick_app_idle_and_quit_figures_are_reported(tmp_path: Path) -> None:
    """The whole app idle (its window, a store, ~700 agent files watched; 20 s at --quick)
    and its quit: the measuring process says how long it idled and when it closed."""
    raw = tmp_path / "raw.jsonl"
    figures = quick_figures("app-idle", raw)
    assert set(figures) == {"app-idle", "app-quit"}
    for f in figures.values():
        assert f["ours"] > 0, f
        assert f["baseline"] > 0, f
        assert f["target"].startswith("<="), f
    watched = re.search(r"([\d,]+) agent session files", figures["app-idle"]["workload"])
    assert watched is not None
    assert int(watched.group(1).replace(",", "")) >= 640
    lines = [orjson.loads(x) for x in raw.read_bytes().splitlines()]
    (app,) = [x for x in lines if x["figure"] == "idle"]
    (empty,) = [x for x in lines if x["figure"] == "idle-baseline"]
    assert app["status"] == 0
    assert app["start_settled"] is True
    assert 20 <= app["seconds"] < 25
    assert 20 <= empty["seconds"] < 25
    assert app["closed_at"] < app["returned_at"]
    assert app["main_wakeups_per_second"] >= 0
    assert figures["app-quit"]["ours"] >= app["returned_at"] - app["closed_at"]
