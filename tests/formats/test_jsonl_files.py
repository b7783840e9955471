"""`jsonl_files` lists a tool's folder as `sorted(root.rglob("*.jsonl"))` of regular files
did (the order imports and the app's watcher meet files in), without pathlib's walk."""

from __future__ import annotations

import os
from pathlib import Path

from forkwise.core.formats.base import jsonl_files
from forkwise.core.formats.claude import READER as CLAUDE
from forkwise.core.formats.pi import READER as PI


def test_the_same_files_in_the_same_order_as_rglob(tmp_path: Path) -> None:
    names = [
        "a/b.jsonl", "a-c/d.jsonl", "a/b/c.jsonl", "a/a.jsonl", "A/z.jsonl", "a.b/x.jsonl",
        "top.jsonl", "a/notes.txt", "deep/er/still/x.jsonl", "a/.hidden.jsonl",
    ]  # fmt: skip
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    (tmp_path / "folder.jsonl").mkdir()  # a folder with the suffix is no session file
    (tmp_path / "linked").symlink_to(tmp_path / "a")  # a linked folder is not entered
    os.symlink(tmp_path / "top.jsonl", tmp_path / "link.jsonl")  # a linked file is listed
    expected = sorted(p for p in tmp_path.rglob("*.jsonl") if p.is_file())
    assert jsonl_files(tmp_path) == expected
    assert len(expected) == 10
    assert list(PI.session_files(tmp_path)) == expected


def test_claude_lists_subagent_files_last(tmp_path: Path) -> None:
    for name in ("p/agent-1.jsonl", "p/b.jsonl", "p/a.jsonl", "q/agent-0.jsonl", "q/c.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    found = [str(p.relative_to(tmp_path)) for p in CLAUDE.session_files(tmp_path)]
    assert found == ["p/a.jsonl", "p/b.jsonl", "q/c.jsonl", "p/agent-1.jsonl", "q/agent-0.jsonl"]
