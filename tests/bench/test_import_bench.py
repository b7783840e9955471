"""The synthetic agent folders of the import benchmarks are what the readers and the import
verb take for real sessions: every file imports, with the forks the generators put there
(a smoke, not a timing check)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.import_figures import tree_size
from forkwise.core.bench.synth_sources import claude_projects, codex_home
from forkwise.core.cli import main as cli
from forkwise.core.formats.claude import ClaudeReader
from forkwise.core.formats.codex import CodexReader


def import_json(tool: str, source: Path, store: Path) -> dict[str, list[object]]:
    out = io.StringIO()
    code = cli.main(
        ["sessions", "import", "--from", tool, str(source), "--store", str(store), "--json"],
        out=out,
        err=io.StringIO(),
    )
    report: dict[str, list[object]] = orjson.loads(out.getvalue())
    assert code == 0, report
    return report


def without_src(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in e.items() if k != "src"} for e in events]


def test_claude_projects_are_sessions_with_rewinds(tmp_path: Path) -> None:
    files = claude_projects(tmp_path / "home", sessions=40, turns=8)
    assert len(files) == 40
    size, lines = tree_size(files)
    assert size > 0
    assert lines > 40 * 8
    reader = ClaudeReader(live_window=0)
    sessions = [s for f in files for s in reader.read(f)]
    mains = [s for s in sessions if s.parent is None]
    forks = [s for s in sessions if s.relation == "fork"]
    assert len(mains) == 40
    assert forks, "no rewind became a fork"
    for main in mains:  # every prompt a turn, every turn ended, every call answered
        kinds = [e["type"] for e in main.events]
        assert kinds[-1] == "turn/end"
        assert kinds.count("turn/start") == kinds.count("turn/end") > 0
        calls = [
            p for e in main.events if e["type"] == "message" for p in e["parts"]
            if p["type"] == "tool_call"
        ]  # fmt: skip
        assert len(calls) == kinds.count("tool/result") > 0


def test_claude_projects_stop_at_their_size(tmp_path: Path) -> None:
    files = claude_projects(tmp_path, megabytes=1.5)
    size, _ = tree_size(files)
    assert 1_500_000 <= size < 1_500_000 + max(f.stat().st_size for f in files)


def test_claude_projects_import_and_import_again_unchanged(tmp_path: Path) -> None:
    files = claude_projects(tmp_path / "home", sessions=12, turns=4)
    first = import_json("claude", tmp_path / "home", tmp_path / "store")
    assert first["failed"] == []
    assert len(first["imported"]) >= len(files)
    again = import_json("claude", tmp_path / "home", tmp_path / "store")
    assert again["imported"] == again["updated"] == again["failed"] == []
    assert sorted(again["unchanged"]) == sorted(first["imported"])  # type: ignore[type-var]


def test_codex_home_imports_with_its_forks(tmp_path: Path) -> None:
    size = codex_home(tmp_path, 2.5)
    files = list(CodexReader().session_files(tmp_path / "sessions"))
    assert size >= 2_500_000
    assert sum(f.stat().st_size for f in files) == size
    reader = CodexReader()
    sessions = [s for f in files for s in reader.read(f)]
    forks = [s for s in sessions if s.relation == "fork"]
    assert forks
    by_id = {s.id: s for s in sessions}
    for fork in forks:
        parent = by_id[fork.parent or ""]
        strip = without_src(parent.events)
        assert without_src(fork.events[: len(strip)]) == strip


def test_the_import_stages_add_up_for_both_tools(tmp_path: Path) -> None:
    """`import_stages` runs each stage over every line of the files and prints one row
    for each, per line (a smoke, not a timing check)."""
    from forkwise.core.bench.import_stages import main, stages

    claude_projects(tmp_path / "claude", sessions=3, turns=2, seed=3)
    codex_home(tmp_path / "codex", 0.05)
    for tool in ("claude", "codex"):
        root = tmp_path / tool
        files = sorted(root.rglob("*.jsonl"))
        lines, found = stages(tool, root)
        assert lines == sum(1 for f in files for raw in f.read_bytes().split(b"\n") if raw)
        names = [name for name, _ in found]
        assert names[0].startswith("parse")
        assert names[-2].startswith("verb")
        verb = dict(found)["verb (import_sources)"]
        assert verb > 0
        parts = sum(took for _, took in found[1:5])  # load, mapping, layout, check
        assert dict(found)["rest (write, fsync, store)"] == pytest.approx(verb - parts)
    assert main(["pi", str(tmp_path)]) == 2
    assert main(["codex", str(tmp_path / "nothing")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["codex", str(tmp_path / "empty")]) == 1


def test_the_floor_scripts_write_every_session_durably_and_time_each_level(
    tmp_path: Path,
) -> None:
    """`import_floor`'s levels run over a real Codex home: the write level leaves one
    named file a rollout, each line a numbered event; every level takes CPU time."""
    import subprocess
    import sys

    from forkwise.core.bench import import_floor

    home = tmp_path / "codex"
    codex_home(home, 0.3)
    rollouts = sorted(home.rglob("*.jsonl"))
    dest = tmp_path / "written"
    subprocess.run(
        [sys.executable, "-c", import_floor.SCRIPT, str(home), str(dest), "2"], check=True
    )
    written = sorted(dest.iterdir())
    assert [p.suffix for p in written] == [".jsonl"] * len(rollouts)  # no temporary left
    first = written[0].read_bytes().split(b"\n")
    events = [orjson.loads(x) for x in first[1:] if x]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(list(e)[:3] == ["seq", "type", "ts"] for e in events)
    took = import_floor.floors(home, repeat=1)
    assert len(took) == len(import_floor.LEVELS)
    assert all(t > 0 for t in took)
