"""A fork of an imported Claude Code session continues with its Claude model: the CLI
imports a real-format transcript (thinking with its signature, a Bash tool call and its
result, a pasted image), forks it and prompts the fork; the product's Anthropic provider
(the real `anthropic` SDK) talks to a stand-in Messages server on 127.0.0.1 reached
through $ANTHROPIC_BASE_URL."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server
from vendor_streams import claude_error, claude_stream

from forkwise.core.cli import main as cli

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
from claude_fixtures import MODEL, SID, Transcript

KEY = "sk-ant-standin-0123456789abcdef"
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


def claude_session(root: Path) -> tuple[Path, dict[str, Any]]:
    t = Transcript(SID)
    turn = t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    t.user([{"type": "text", "text": "what is in this picture?"}, IMAGE])
    t.assistant([{"type": "text", "text": "A tiny PNG."}])
    return t.write(root / f"{SID}.jsonl"), turn


def run_cli(*args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def claude_env(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return tmp_path / "store"


async def imported_fork(tmp_path: Path, store: Path) -> tuple[str, dict[str, Any]]:
    path, turn = claude_session(tmp_path / "claude")
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "import", "--from", "claude", str(path), "--store", str(store), "--json"
    )
    assert code == 0, err
    assert orjson.loads(out)["imported"] == [f"claude-{SID}"]
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "fork", f"claude-{SID}", "--store", str(store), "--json"
    )
    assert code == 0, err
    return orjson.loads(out)["child"], turn


def child_events(store: Path, sid: str) -> list[dict[str, Any]]:
    """The session's events as its file holds them (line 1 is the header)."""
    lines = (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines[1:]]


@pytest.mark.asyncio
async def test_a_fork_of_a_claude_code_session_answers_with_its_model_and_whole_history(
    server: Server, claude_env: Path, tmp_path: Path
) -> None:
    child, turn = await imported_fork(tmp_path, claude_env)
    selected = [e for e in child_events(claude_env, child) if e["type"] == "model/select"]
    assert (selected[-1]["provider"], selected[-1]["model"]) == ("anthropic", MODEL)

    server.stream(claude_stream(text="Continued from here.", model=MODEL), done=False)
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "prompt", child, "what next?", "--store", str(claude_env)
    )
    assert code == 0, err
    assert out.strip() == "Continued from here."

    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert KEY in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])
    body = request.json()
    assert body["model"] == MODEL
    assert body["stream"] is True
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == [{"type": "text", "text": "list the files"}]
    # the tool call's reply as Claude made it: thinking with its signature, text, tool_use
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "Think about ls", "signature": "c2ln"},
        {"type": "text", "text": "I will run ls."},
        {"type": "tool_use", "id": turn["call"], "name": "Bash",
         "input": {"command": "ls", "description": "run it"}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": turn["call"], "content": "a.py\nb.py"}
    ]
    assert messages[3]["content"] == [{"type": "text", "text": "There are two files."}]
    assert messages[4]["content"] == [{"type": "text", "text": "what is in this picture?"}, IMAGE]
    assert messages[6]["content"] == [{"type": "text", "text": "what next?"}]
    # Forkwise's own tools are offered as Anthropic tools
    names = {t["name"] for t in body["tools"]}
    assert "read_file" in names
    assert all("input_schema" in t for t in body["tools"])

    events = child_events(claude_env, child)
    reply = [e for e in events if e["type"] == "message" and e["role"] == "assistant"][-1]
    assert reply["parts"] == [{"type": "text", "text": "Continued from here."}]
    forked_at = next(i for i, e in enumerate(events) if e["type"] == "history/fork")
    usage = [e for e in events[forked_at:] if e["type"] == "usage"]  # the fork's own
    assert len(usage) == 1
    assert {k: usage[0][k] for k in ("model", "input", "output", "cacheRead", "cacheWrite")} == {
        "model": MODEL, "input": 12, "output": 34, "cacheRead": 500, "cacheWrite": 60,
    }


@pytest.mark.asyncio
async def test_thinking_comes_back_with_its_signature_on_the_next_request(
    server: Server, claude_env: Path, tmp_path: Path
) -> None:
    child, _ = await imported_fork(tmp_path, claude_env)
    server.sequence(
        server.stream(claude_stream(text="Reading it.", thinking="Check a.py", signature="U2lnMQ==",
                                    tool=("toolu_fw1", "read_file", {"path": "a.py"})), done=False),
        server.stream(claude_stream(text="Done."), done=False),
    )
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "prompt", child, "read a.py", "--store", str(claude_env)
    )
    assert code == 0, err
    approval = out.split("\t")[0]
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "approve", child, approval, "--deny", "--store", str(claude_env)
    )
    assert code == 0, err
    assert out.strip() == "Done."
    second = server.requests[1].json()["messages"]
    assert second[-2]["content"][:2] == [
        {"type": "thinking", "thinking": "Check a.py", "signature": "U2lnMQ=="},
        {"type": "text", "text": "Reading it."},
    ]
    assert second[-2]["content"][2]["type"] == "tool_use"
    assert second[-1]["content"][0]["tool_use_id"] == "toolu_fw1"


@pytest.mark.asyncio
async def test_a_429_is_retried_by_the_sdk_then_reported_in_plain_words(
    server: Server, claude_env: Path, tmp_path: Path
) -> None:
    child, _ = await imported_fork(tmp_path, claude_env)
    limited = server.respond(
        429, claude_error("rate_limit_error", "Number of requests has exceeded your rate limit"),
        headers={"retry-after-ms": "20"},
    )
    server.sequence(limited)
    code, out, err = await asyncio.to_thread(
        run_cli, "sessions", "prompt", child, "again?", "--store", str(claude_env)
    )
    assert code == 1
    assert len(server.requests) == 3  # the SDK's two retries
    assert "Anthropic is limiting requests (HTTP 429" in err
    assert "tried 3 times" in err
    assert KEY not in out + err
    events = child_events(claude_env, child)
    assert events[-1]["type"] == "turn/end"
    assert events[-1]["status"] == "failed"


@pytest.mark.asyncio
async def test_without_a_configured_anthropic_provider_the_fork_takes_the_preferences_model(
    server: Server, claude_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    child, _ = await imported_fork(tmp_path, claude_env)
    selected = [e for e in child_events(claude_env, child) if e["type"] == "model/select"]
    assert selected[-1]["provider"] == "offline"
    assert server.requests == []
