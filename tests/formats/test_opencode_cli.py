"""The real OpenCode (npm `opencode-ai`, pinned), driven offline against a stand-in model on
127.0.0.1: `opencode serve` and its HTTP API make sessions, a fork, a subtask's session and
a revert; Forkwise imports its database with that lineage; a fork continued here goes back
with `opencode import` and comes out of `opencode export` with the same conversation."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from agent_npm import ensure, free_port
from standin_model import StandInModel

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import source_session_id

MODEL = {"providerID": "standin", "modelID": "standin-model"}


class OpenCodeHome:
    """An OpenCode install of its own: XDG folders under `root`, a project folder with an
    `opencode.json` naming the stand-in model (an OpenAI-compatible provider)."""

    def __init__(self, root: Path, model: StandInModel) -> None:
        self.binary = ensure("opencode")
        self.root = root
        self.project = root / "project"
        self.project.mkdir(parents=True)
        config = {
            "autoupdate": False,
            "share": "disabled",
            "provider": {
                "standin": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Stand-in",
                    "options": {"baseURL": f"{model.url}/v1", "apiKey": "standin"},
                    "models": {"standin-model": {"name": "Stand-in"}},
                }
            },
            "model": "standin/standin-model",
            "small_model": "standin/standin-model",
        }
        (self.project / "opencode.json").write_text(json.dumps(config))
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(root / "home"),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "PWD": str(self.project),  # OpenCode takes its project folder from PWD
        }

    @property
    def db(self) -> Path:
        return self.root / "data" / "opencode" / "opencode.db"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.binary), *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout

    @contextlib.contextmanager
    def serve(self) -> Iterator[Any]:
        port = free_port()
        proc = subprocess.Popen(
            [str(self.binary), "serve", "--port", str(port), "--hostname", "127.0.0.1"],
            cwd=self.project,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"

        def call(method: str, path: str, body: Any = None) -> Any:
            data = json.dumps(body).encode() if body is not None else None
            request = urllib.request.Request(
                base + path, method=method, data=data, headers={"content-type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read() or b"null")

        try:
            for _ in range(200):  # bounded: 60 s at most
                try:
                    call("GET", "/session")
                    break
                except OSError:
                    time.sleep(0.3)
            yield call
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


@pytest.fixture
def model() -> Iterator[StandInModel]:
    made = StandInModel()
    yield made
    made.close()


def prompt(call: Any, sid: str, text: str) -> None:
    call("POST", f"/session/{sid}/message", {"model": MODEL, "parts": [{"type": "text", "text": text}]})


def test_opencodes_fork_subtask_and_revert_import_as_lineage(
    tmp_path: Path, model: StandInModel
) -> None:
    home = OpenCodeHome(tmp_path / "oc", model)
    with home.serve() as call:
        main = call("POST", "/session", {"title": "Haiku work"})["id"]
        prompt(call, main, "Write about the sea")
        prompt(call, main, "Now the mountains")
        listed = call("GET", f"/session/{main}/message")
        second = listed[2]["info"]["id"]
        fork = call("POST", f"/session/{main}/fork", {"messageID": second})
        assert fork["title"] == "Haiku work (fork #1)"
        assert fork.get("parentID") is None  # nothing but its content says where it came from
        prompt(call, fork["id"], "Now the forest")
        sub = call("POST", "/session", {"parentID": main, "title": "Look around"})["id"]
        prompt(call, sub, 'Check /tool bash {"command": "echo hi", "description": "say hi"}')
        call("POST", f"/session/{main}/revert", {"messageID": second})
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "opencode", str(home.db), "--store", str(store))
    assert code == 0, report
    code, rows = run_json("sessions", "list", "--store", str(store))
    by_id = {r["id"]: r for r in rows}
    main_id = source_session_id("opencode", main)
    fork_id = source_session_id("opencode", fork["id"])
    sub_id = source_session_id("opencode", sub)
    reverted = source_session_id("opencode", main, second)
    assert (by_id[fork_id]["parentSession"], by_id[fork_id]["relation"]) == (main_id, "fork")
    assert by_id[fork_id]["seedLength"] > 0  # the copied first turn stored once
    assert (by_id[sub_id]["parentSession"], by_id[sub_id]["relation"]) == (main_id, "subagent")
    assert (by_id[reverted]["parentSession"], by_id[reverted]["relation"]) == (main_id, "fork")
    code, shown = run_json("sessions", "show", main_id, "--store", str(store))
    texts = [p["text"] for e in shown["events"] if e["type"] == "message" for p in e["parts"]
             if p["type"] == "text"]
    assert "Write about the sea" in texts
    assert "Now the mountains" not in texts  # reverted: on its own branch
    code, shown = run_json("sessions", "show", sub_id, "--store", str(store))
    results = [e for e in shown["events"] if e["type"] == "tool/result"]
    assert results[0]["tool"] == "bash"
    assert results[0]["output"].strip() == "hi"
    # the same database again: nothing changes
    code, again = run_json("sessions", "import", "--from", "opencode", str(home.db), "--store", str(store))
    assert code == 0
    assert again["imported"] == again["updated"] == []


def test_a_fork_continued_here_round_trips_through_opencode_import_and_export(
    tmp_path: Path, model: StandInModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = OpenCodeHome(tmp_path / "oc", model)
    home.run("run", "-m", "standin/standin-model", "Write about the sea")
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "opencode", str(home.db), "--store", str(store))
    assert code == 0, report
    [source] = report["imported"]
    code, _ = run_json("sessions", "fork", source, "--child", "mine", "--store", str(store))
    assert code == 0
    code, turn = run_json("sessions", "prompt", "mine", "go on from here", "--store", str(store))
    assert (code, turn["status"]) == (0, "completed")
    monkeypatch.setenv("XDG_DATA_HOME", home.env["XDG_DATA_HOME"])
    code, sent = run_json("sessions", "export", "mine", "--to", "opencode", "--store", str(store))
    assert code == 0, sent
    out = home.run("import", sent["path"])
    assert sent["id"] in out
    exported = json.loads(home.run("export", sent["id"]))
    texts = [p.get("text") for m in exported["messages"] for p in m["parts"] if p["type"] == "text"]
    assert texts[0].strip('"') == "Write about the sea"
    assert "go on from here" in texts
    assert exported["info"]["id"] == sent["id"]
