"""The Codex import benchmark runs and measures what it says (a smoke, not a timing check)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkwise.core.bench import codex_import
from forkwise.core.formats.codex import CodexReader


def test_synthetic_home_imports_with_its_forks(tmp_path: Path) -> None:
    size = codex_import.write_home(tmp_path, 2.5)
    files = list(CodexReader().session_files(tmp_path / "sessions"))
    assert size >= 2_500_000
    assert sum(f.stat().st_size for f in files) == size
    reader = CodexReader()
    sessions = [s for f in files for s in reader.read(f)]
    forks = [s for s in sessions if s.relation == "fork"]
    assert forks
    by_id = {s.id: s for s in sessions}
    for fork in forks:
        parent = by_id[fork.parent]
        strip = [{k: v for k, v in e.items() if k != "src"} for e in parent.events]
        assert [
            {k: v for k, v in e.items() if k != "src"} for e in fork.events[: len(strip)]
        ] == strip


def test_benchmark_prints_its_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert codex_import.main(["--mb", "1", "--repeat", "1", "--json"]) == 0
    figure = json.loads(capsys.readouterr().out)
    assert figure["figure"] == "codex-import"
    assert figure["bytes"] >= 1_000_000
    assert figure["ours_s"] > 0
    assert figure["orjson_lines_s"] > 0
    assert figure["ratio"] == figure["ours_s"] / figure["orjson_lines_s"]
