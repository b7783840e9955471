"""The synthetic Gemini CLI and OpenCode histories of the import figures are what the readers
and the import verb take for real ones: they import, with the forks the generators put
there, and import again unchanged (a smoke, not a timing check)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from forkwise.core.bench.synth_agents import gemini_home, opencode_db
from forkwise.core.cli import main as cli


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


def rows(store: Path) -> list[dict[str, object]]:
    out = io.StringIO()
    assert cli.main(["sessions", "list", "--store", str(store), "--json"], out=out) == 0
    listed: list[dict[str, object]] = orjson.loads(out.getvalue())
    return listed


def test_a_gemini_home_imports_with_its_rewinds_and_again_unchanged(tmp_path: Path) -> None:
    files = gemini_home(tmp_path / "home", 1.0)
    assert sum(f.stat().st_size for f in files) >= 1_000_000
    first = import_json("gemini", tmp_path / "home" / ".gemini", tmp_path / "store")
    assert first["failed"] == []
    forks = [r for r in rows(tmp_path / "store") if r.get("relation") == "fork"]
    assert len(forks) == len(files) // 5  # a $rewindTo in every fifth session
    assert all(int(str(r["seedLength"])) > 0 for r in forks)
    again = import_json("gemini", tmp_path / "home" / ".gemini", tmp_path / "store")
    assert again["imported"] == again["updated"] == again["failed"] == []


def test_an_opencode_database_imports_with_its_forks_and_again_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "data" / "opencode" / "opencode.db"
    assert opencode_db(db, 1.0) >= 1_000_000
    first = import_json("opencode", db, tmp_path / "store")
    assert first["failed"] == []
    listed = rows(tmp_path / "store")
    forks = [r for r in listed if r.get("relation") == "fork"]
    assert forks
    assert len(forks) == len(listed) // 10  # every tenth session copies its predecessor
    assert all(int(str(r["seedLength"])) > 0 for r in forks)
    again = import_json("opencode", db, tmp_path / "store")
    assert again["imported"] == again["updated"] == again["failed"] == []
