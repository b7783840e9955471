"""`sessions list` tells a session that waits for the person's approval from one that runs
(the table and --json), on the demo store."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from forkwise.core.cli import main as cli
from forkwise.core.demo import build_demo_store


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_list_says_which_session_needs_approval(tmp_path: Path) -> None:
    build_demo_store(tmp_path)
    code, out, _ = run("sessions", "list", "--store", str(tmp_path), "--json")
    assert code == 0
    rows = orjson.loads(out)
    waiting = [(r["title"], r["running"], r["waitingTools"]) for r in rows if r["waiting"]]
    assert waiting == [("Clean up the build folder", True, ["read_file"])]
    assert all(r["waitingTools"] == [] for r in rows if not r["waiting"])

    code, out, _ = run("sessions", "list", "--store", str(tmp_path))
    assert code == 0
    marked = [line for line in out.splitlines() if "needs approval" in line]
    assert len(marked) == 1
    assert marked[0].endswith("[needs approval: read_file] Clean up the build folder")
    assert not any(line.split()[-1:] == ["*"] or " * " in line for line in out.splitlines())
