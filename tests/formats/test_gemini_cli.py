"""The real Gemini CLI (npm `@google/gemini-cli`, pinned), driven offline against a stand-in
Gemini API on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`): what `gemini -p` and `gemini --resume`
write is imported, and grows by appending; a fork continued here is written where Gemini
CLI lists it, and `gemini --resume <id>` continues it with the fork's own turn in the
history it sends."""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from agent_npm import ensure
from standin_model import StandInModel

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import source_session_id


class GeminiHome:
    """Gemini CLI with a home of its own (`GEMINI_CLI_HOME`), an API key for the stand-in,
    and a trusted project folder."""

    def __init__(self, root: Path, model: StandInModel) -> None:
        self.binary = ensure("gemini")
        self.home = root / "home"
        self.project = root / "project"
        self.project.mkdir(parents=True)
        (self.home / ".gemini").mkdir(parents=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "GEMINI_CLI_HOME": str(self.home),
            "GEMINI_API_KEY": "standin",
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1",
            "PWD": str(self.project),
            # anything it would fetch from elsewhere (updates, experiments) fails at once
            # on a closed local port instead of waiting on a network this test lacks
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
        }

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.binary), *args, "-m", "gemini-2.5-flash"],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


@pytest.fixture
def model() -> Iterator[StandInModel]:
    made = StandInModel()
    yield made
    made.close()


def texts(store: Path, sid: str) -> list[str]:
    code, shown = run_json("sessions", "show", sid, "--store", str(store))
    assert code == 0, shown
    return [p["text"] for e in shown["events"] if e["type"] == "message" for p in e["parts"]
            if p["type"] == "text"]


def test_what_gemini_cli_writes_imports_and_grows(tmp_path: Path, model: StandInModel) -> None:
    gemini = GeminiHome(tmp_path / "g", model)
    gemini.run("-p", "Say hello please")
    store = tmp_path / "store"
    tmp = str(gemini.home / ".gemini" / "tmp")
    code, report = run_json("sessions", "import", "--from", "gemini", tmp, "--store", str(store))
    assert code == 0, report
    [sid] = report["imported"]
    assert texts(store, sid) == ["Say hello please", "Answer: Say hello please"]
    gemini.run("--resume", "latest", "-p", 'Look /tool list_directory {"dir_path": "."}')
    code, grown = run_json("sessions", "import", "--from", "gemini", tmp, "--store", str(store))
    assert code == 0, grown
    assert grown["updated"] == [sid]
    assert grown["failed"] == []
    code, shown = run_json("sessions", "show", sid, "--store", str(store))
    calls = [p["name"] for e in shown["events"] if e["type"] == "message" for p in e["parts"]
             if p["type"] == "tool_call"]
    assert calls == ["list_directory"]
    assert [e["tool"] for e in shown["events"] if e["type"] == "tool/result"] == ["list_directory"]
    assert [e["status"] for e in shown["events"] if e["type"] == "turn/end"] == ["completed"] * 2


def test_a_fork_continued_here_resumes_in_gemini_cli(
    tmp_path: Path, model: StandInModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini = GeminiHome(tmp_path / "g", model)
    gemini.run("-p", "Write about the sea")
    store = tmp_path / "store"
    tmp = str(gemini.home / ".gemini" / "tmp")
    code, report = run_json("sessions", "import", "--from", "gemini", tmp, "--store", str(store))
    assert code == 0, report
    [source] = report["imported"]
    code, _ = run_json("sessions", "fork", source, "--child", "mine", "--store", str(store))
    assert code == 0
    code, turn = run_json("sessions", "prompt", "mine", "go on from here", "--store", str(store))
    assert (code, turn["status"]) == (0, "completed")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini.home))
    code, sent = run_json("sessions", "export", "mine", "--to", "gemini", "--store", str(store))
    assert code == 0, sent
    assert sent["resume"] == f"gemini --resume {sent['id']}"
    listed = gemini.run("--list-sessions")
    assert sent["id"] in listed
    asked = len(model.requests)
    gemini.run("--resume", sent["id"], "-p", "and now the mountains")
    history = json.dumps([r["body"] for r in model.requests[asked:]])
    assert "Write about the sea" in history  # the source's turn, from the source's lines
    assert "go on from here" in history  # the turn made in Forkwise
    # what Gemini CLI added to the written file comes back beneath the fork it continues
    code, again = run_json("sessions", "import", "--from", "gemini", tmp, "--store", str(store))
    assert code == 0, again
    back = source_session_id("gemini", sent["id"])
    code, rows = run_json("sessions", "list", "--store", str(store))
    row = next(r for r in rows if r["id"] == back)
    assert (row["parentSession"], row["relation"]) == ("mine", "continued")
    assert "and now the mountains" in texts(store, back)
