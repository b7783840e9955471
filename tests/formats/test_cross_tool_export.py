"""A session imported from one agent, exported to another: the other agent's reader finds
every message, in that agent's own shape. Lines are copied byte for byte only into the
tool they came from; into another tool the turns are written as that tool writes them
(a pi or Claude Code line copied into a Codex rollout made Codex read 0 messages).

Every pair of the five agents, through the one import and export path (`forkwise sessions
import`, then `export --to`), read back by the target's own reader."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_fixtures import project_file, rich_transcript, write_old
from codex_fixtures import basic
from gemini_fixtures import coding_session as gemini_session
from gemini_fixtures import settled as gemini_settled
from opencode_fixtures import OpenCodeDb
from opencode_fixtures import settled as opencode_settled
from pi_fixtures import coding_session as pi_session
from pi_fixtures import settled as pi_settled

from forkwise.core.cli import main as cli
from forkwise.core.host.importing import FORMATS, format_module


def source_file(tool: str, root: Path) -> Path:
    """A realistic session of `tool`, written where that tool keeps it under `root`."""
    if tool == "claude":
        t = rich_transcript()
        assert project_file(root / "claude", t)
        return write_old(t, root / "claude")
    if tool == "codex":
        return basic().write(root / "codex")
    if tool == "pi":
        return pi_settled(pi_session().write(root / "pi" / "sessions" / "--project--"))
    if tool == "gemini":
        return gemini_settled(gemini_session().write(root / "gemini" / ".gemini"))
    db = OpenCodeDb(root / "opencode" / "opencode" / "opencode.db")
    sid = db.session("Summarise the README")
    db.exchange(sid, "Read the README and summarise it", "The README describes a demo.")
    db.exchange(sid, "Now list the source folder", "There is one file: main.py.")
    db.close()
    return opencode_settled(db.path)


def run(*argv: str, env: dict[str, str] | None = None) -> Any:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    assert code == 0, err.getvalue() + out.getvalue()
    return orjson.loads(out.getvalue())


def texts(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of every message with text: what a person reads in the transcript."""
    out = []
    for e in events:
        if e.get("type") != "message":
            continue
        text = "".join(p.get("text", "") for p in e.get("parts", []) if p.get("type") == "text")
        if text.strip():
            out.append((e["role"], text.strip()))
    return out


def read_back(tool: str, path: Path) -> list[tuple[str, str]]:
    """The messages the target agent finds in what was written for it: its reader's, or
    for OpenCode (a file `opencode import` takes in) the file's messages themselves."""
    if tool == "opencode":
        exported = orjson.loads(path.read_bytes())
        out = []
        for m in exported["messages"]:
            text = "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text")
            if text.strip():
                out.append((m["info"]["role"], text.strip()))
        return out
    back = format_module(tool).READER.read(path)
    return texts(max(back, key=lambda s: len(s.events)).events)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every agent's folder under `tmp_path`, none of this machine's."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "out" / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "out" / "codex"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "out" / "pi"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "out" / "gemini-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "out" / "data"))
    return tmp_path


@pytest.mark.parametrize("source", FORMATS)
def test_an_imported_session_reads_back_whole_in_every_other_agent(
    homes: Path, source: str
) -> None:
    store = str(homes / "store")
    path = source_file(source, homes / "src")
    report = run("sessions", "import", str(path), "--from", source, "--store", store)
    assert report["failed"] == [], report
    imported = sorted(report["imported"])[0]
    # a fork of it continued here: the copied turns, then one of Forkwise's own
    sid = run("sessions", "fork", imported, "--store", store)["child"]
    run("sessions", "prompt", sid, "and one more thing", "--store", store)
    stored = run("sessions", "show", sid, "--store", store)["events"]
    want = texts(stored)
    assert len(want) >= 4, want
    failures = {}
    for target in FORMATS:
        if target == source:
            continue
        made = run("sessions", "export", sid, "--to", target, "--store", store)
        got = read_back(target, Path(made["path"]))
        if got != want:
            failures[target] = got
    assert failures == {}, want
