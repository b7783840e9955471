"""The PostgreSQL figures run against the test server (a smoke, not a timing check), and
their schema is dropped afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import psycopg


def test_quick_postgres_figures_have_baselines_and_leave_nothing(
    pg_server: object, tmp_path: Path
) -> None:
    url = pg_server.url()  # type: ignore[attr-defined]
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))  # the fork's local files
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.bench", "--quick", "--json", "--repeat", "1",
         "--only", "postgres", "--postgres", url],
        capture_output=True, text=True, check=False, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = {f["name"]: f for f in orjson.loads(done.stdout)}
    assert set(figures) == {"pg-list", "pg-list-jsonl", "pg-fork", "pg-fork-jsonl", "pg-copy"}
    for f in figures.values():
        assert f["ours"] > 0, f
        assert f["baseline"] > 0, f
    with psycopg.connect(url) as conn:
        left = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_%'"
        ).fetchall()
    assert left == []


def test_without_a_database_the_figures_are_skipped_and_said_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.bench", "--quick", "--json", "--repeat", "1",
         "--only", "postgres"],
        capture_output=True, text=True, check=True, timeout=120,
        env={"PATH": "/usr/bin", "HOME": "/nonexistent"},
    )  # fmt: skip
    assert orjson.loads(done.stdout) == []
    assert "PostgreSQL figures skipped" in done.stderr
