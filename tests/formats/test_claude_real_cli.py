"""The real Claude Code (2.0.77 and 2.1.328 from npm) resumes an exported session.

Claude Code is pointed at a fake Anthropic API on 127.0.0.1 (ANTHROPIC_BASE_URL), so no
network is used: the test reads the request Claude Code builds from the exported file (the
conversation it resumed, including the turn added in Forkwise) and then reads back, with
Forkwise's reader, the entries Claude Code itself appended to that file. The package is
installed once, pinned, into a cache folder outside the checkout; a failure to install
fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_checks import convo, export_input, stored, without_src
from claude_fixtures import SID, Transcript, forkwise_turn

from forkwise.core.formats.claude import READER, WRITER

REPLY = "Reply from the fake API."
#: Claude Code as JavaScript (the last 2.0 release, run with Node) and as the native
#: linux-x64 build of a 2.1 release (its platform package, without the installer script)
RELEASES = {
    "2.0.77": ("@anthropic-ai/claude-code", "cli.js"),
    "2.1.328": ("@anthropic-ai/claude-code-linux-x64", "claude"),
}


@pytest.fixture(scope="module", params=sorted(RELEASES))
def claude_cli(request: pytest.FixtureRequest) -> list[str]:
    """The command that runs one pinned Claude Code release, installed once into a cache
    folder outside the checkout; a failed install fails the test."""
    version: str = request.param
    package, entry = RELEASES[version]
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed to run Claude Code")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    prefix = cache / "forkwise-tests" / "npm" / f"claude-code-{version}"
    program = prefix / "node_modules" / package / entry
    if not program.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--ignore-scripts", f"{package}@{version}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not program.exists():
            pytest.fail(f"cannot install Claude Code {version}: {done.stderr[-2000:]}")
    return [node, str(program)] if entry.endswith(".js") else [str(program)]


class _FakeAnthropic(BaseHTTPRequestHandler):
    """Answers every Messages API call with one text reply; keeps the requests."""

    requests: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        self.requests.append({"path": self.path, "body": body})
        if "count_tokens" in self.path:
            self._json({"input_tokens": 10})
            return
        message = {
            "id": f"msg_fake{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        }
        if not body.get("stream"):
            content = [{"type": "text", "text": REPLY}]
            self._json({**message, "content": content, "stop_reason": "end_turn"})
            return
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": REPLY}
        stop = {"stop_reason": "end_turn", "stop_sequence": None}
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 3}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for name, event in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()


@pytest.fixture
def fake_api() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (_FakeAnthropic,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def test_claude_code_resumes_an_exported_fork(
    tmp_path: Path, claude_cli: list[str], fake_api: tuple[str, list[dict[str, Any]]]
) -> None:
    url, requests = fake_api
    project = tmp_path / "proj.x"
    project.mkdir()
    t = Transcript(SID, cwd=str(project))
    t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    t.exchange("and now?", "Nothing else.")
    source = t.write(tmp_path / "src" / f"{SID}.jsonl")
    os.utime(source, (1_700_000_000, 1_700_000_000))
    main = READER.read(source)[0]
    config = tmp_path / "home" / ".claude"
    done = WRITER.export(export_input(main, forkwise_turn(main)), config, None)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    command = [*done.resume.split(), "-p", "what did we count?"]
    assert command[:3] == ["claude", "--resume", done.id]
    run = subprocess.run(
        [*claude_cli, *command[1:]],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert REPLY in run.stdout
    # the request that answers the prompt carries the whole exported conversation
    asked = [r["body"] for r in requests if len(r["body"].get("messages", ())) > 1]
    assert len(asked) == 1
    messages = asked[0]["messages"]
    said = [
        (m["role"], b.get("text") or b.get("name") or b.get("content"))
        for m in messages
        if m["role"] in ("user", "assistant")  # 2.1 adds its environment as a system message
        for b in blocks(m)
        if b["type"] in ("text", "tool_use", "tool_result")
        and not str(b.get("text", "")).startswith("<system-reminder>")
    ]
    assert said == [
        ("user", "list the files"),
        ("assistant", "I will run ls."),
        ("assistant", "Bash"),
        ("user", "a.py\nb.py"),
        ("assistant", "There are two files."),
        ("user", "and now?"),
        ("assistant", "Nothing else."),
        ("user", "count the lines"),
        ("assistant", "Counting."),
        ("assistant", "Bash"),
        ("user", "42"),
        ("assistant", "There are 42 lines."),
        ("user", "what did we count?"),
    ]
    # Claude Code appended its own entries to the file; Forkwise reads them back
    back = READER.read(done.path)
    assert len(back) == 1
    assert convo(back[0])[-2:] == [("user", "what did we count?", []), ("assistant", REPLY, [])]
    assert convo(back[0])[:-2] == [
        *convo(main),
        ("user", "count the lines", []),
        ("assistant", "Counting.", [("Bash", {"command": "wc -l"})]),
        ("assistant", "There are 42 lines.", []),
    ]
    statuses = [e["status"] for e in back[0].events if e["type"] == "turn/end"]
    assert statuses == ["completed"] * 4
    # and the subagent files it wrote beside the session (its warm-up agents)
    agents = [p for p in READER.session_files(config / "projects") if p.name.startswith("agent-")]
    for path in agents:
        for sub in READER.read(path):
            assert (sub.parent, sub.relation) == (f"claude-{done.id}", "subagent")
    stored(back, tmp_path / "store")


def test_rewinds_and_forks_made_by_claude_code_read_as_forks(
    tmp_path: Path, claude_cli: list[str], fake_api: tuple[str, list[dict[str, Any]]]
) -> None:
    """Claude Code makes the lineage itself: `--resume-session-at` continues from an earlier
    reply in the same file (a rewind), `--fork-session` copies the session into a new file."""
    url, _ = fake_api
    project = tmp_path / "proj"
    project.mkdir()
    config = tmp_path / "home" / ".claude"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def claude(*args: str) -> None:
        run = subprocess.run(
            [*claude_cli, *args], cwd=project, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]

    sid, fork = "4f0c3b1e-5a6d-4e7f-8a9b-0c1d2e3f4a5b", "7e6d5c4b-3a29-4817-8615-2f3e4d5c6b7a"
    claude("--session-id", sid, "-p", "first")
    claude("--resume", sid, "-p", "second")
    path = next((config / "projects").glob(f"*/{sid}.jsonl"))
    first_reply = next(
        e["uuid"] for e in map(orjson.loads, path.read_bytes().splitlines())
        if e.get("type") == "assistant"
    )  # fmt: skip
    claude("--resume", sid, "--resume-session-at", first_reply, "-p", "second, again")
    claude("--resume", sid, "--fork-session", "--session-id", fork, "-p", "forked question")

    main, branch = READER.read(path)
    assert [c[1] for c in convo(main)] == ["first", REPLY, "second, again", REPLY]
    assert [c[1] for c in convo(branch)] == ["first", REPLY, "second", REPLY]
    assert (branch.parent, branch.relation) == (main.id, "fork")
    first_end = [e["type"] for e in main.events].index("turn/end") + 1
    assert without_src(branch.events[:first_end]) == without_src(main.events[:first_end])

    (copy,) = READER.read(path.with_name(f"{fork}.jsonl"))
    assert (copy.id, copy.parent, copy.relation) == (f"claude-{fork}", main.id, "fork")
    said = [c[1] for c in convo(copy)]
    assert said[:2] == ["first", REPLY]
    assert said[-2:] == ["forked question", REPLY]
    if claude_cli[-1].endswith(".js"):
        # 2.0.77 copies the resumed line as it is: the first turn reads the same as the
        # parent's (2.1.328 also copies the reply of the rewound-away prompt after it)
        assert without_src(copy.events[:first_end]) == without_src(main.events[:first_end])
    stored([main, branch, copy], tmp_path / "store")
