"""The GUI figures of the benchmark suite run at tiny sizes and report well-formed numbers
(a smoke, never a timing check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.gui

GUI_FIGURES = {"open", "open-rss", "cold-start", "cold-frame", "cold-ready", "tree",
               "tree-rest", "tree-scroll", "tree-scroll-cpu"}


def test_quick_gui_figures_are_reported_with_baselines() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.bench", "--quick", "--json", "--repeat", "1",
         "--only", "gui"],
        capture_output=True, text=True, check=True, timeout=300,
    )
    figures = {f["name"]: f for f in orjson.loads(done.stdout)}
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


def test_perf_prints_one_json_line_per_figure(tmp_path: Path) -> None:
    from forkwise.core.bench.gui_figures import BIG, SMALL, perf, write_open_store

    root = write_open_store(tmp_path / "store", 600)
    opened = perf("open", "--store", str(root), "--session", BIG, "--other", SMALL)
    assert opened["figure"] == "open"
    assert opened["rows"] > 0
    assert opened["events_loaded"] > 0
    assert opened["file_bytes"] == (root / "sessions" / f"{BIG}.jsonl").stat().st_size
    assert {"seconds", "rss_before", "rss_growth", "rss_peak_growth"} <= set(opened)
    tree = perf("tree", "--store", str(root))
    assert tree["sessions"] == 2
    assert tree["top_rows"] == 2
    assert tree["rest_seconds"] > 0
    cold = perf("cold", "--store", str(root))
    assert cold["status"] == 0
    assert cold["tree_rows"] == 2
    assert 0 < cold["painted"] <= cold["tree_painted"] <= cold["ready"]
    assert 0 < cold["painted_cpu"] <= cold["tree_painted_cpu"] <= cold["ready_cpu"]
    assert perf("cold-baseline")["painted"] > 0
