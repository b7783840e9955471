"""The host-backed CLI: prompt/approve/fork by the host's rules in-process, and a
`forkwise host` process serving a second process that uses `--connect`."""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from host_process import tcp_host

from forkwise.core.cli import main as cli

TIMEOUT = 30.0


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def run_json(*argv: str) -> Any:
    code, out, err = run(*argv, "--json")
    assert code == 0, (out, err)
    return orjson.loads(out)


def test_prompt_approve_and_fork_in_process(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    (tmp_path / "seen.txt").write_text("x")
    sid = run_json("sessions", "new", "--store", store, "--cwd", str(tmp_path))["id"]
    code, out, err = run("sessions", "prompt", sid, "hello cli", "--store", store)
    assert (code, err) == (0, "")
    assert "hello cli" in out
    code, out, _ = run("sessions", "prompt", sid, '/tool list_dir {"path": "."}', "--store", store)
    assert code == 0
    approval = out.split("\t")[0]
    assert approval.startswith("approval:")
    done = run_json("sessions", "approve", sid, approval, "--store", store)
    assert done["status"] == "completed"
    assert "seen.txt" in done["reply"]
    rows = run_json("sessions", "list", "--store", store)
    assert rows[0]["model"] == "forkwise-offline"

    events = run_json("sessions", "show", sid, "--store", store)["events"]
    first_end = next(e["seq"] for e in events if e["type"] == "turn/end")
    assert (
        run_json("sessions", "fork", sid, "--at", "2", "--store", store)["seedLength"] == first_end
    )
    messages = [e for e in events if e["type"] == "message"]
    second_user = messages[2]["id"]
    before = run_json(
        "sessions", "fork", sid, "--message", second_user, "--exclude-message", "--store", store
    )
    assert before["seedLength"] == first_end
    code, out, _ = run("sessions", "fork", sid, "--at", "3", "--replace", "--store", store)
    assert code == 1  # --replace needs --message
    replaced = run_json(
        "sessions",
        "fork",
        sid,
        "--message",
        second_user,
        "--exclude-message",
        "--replace",
        "--store",
        store,
    )
    assert replaced == {"id": sid, "through_sequence": first_end}
    code, out, err = run("sessions", "prompt", sid, "/fail no luck", "--store", store)
    assert code == 1
    assert "no luck" in err


@pytest.fixture
def host_process(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    sock_dir = Path(os.path.realpath("/tmp")) / f"fwcli-{os.getpid()}-{id(tmp_path)}"
    sock_dir.mkdir()
    sock = sock_dir / "h.sock"
    store = tmp_path / "store"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forkwise.core.cli.main",
            "host",
            "--store",
            str(store),
            "--listen",
            f"unix:{sock}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "the host did not start"
        line = proc.stdout.readline()
        assert line.startswith("forkwise host listening unix:"), line
        yield f"unix:{sock}", store, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(TIMEOUT)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        if sock.exists():
            sock.unlink()
        sock_dir.rmdir()


def client_process(*argv: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli.main", *argv, "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return orjson.loads(done.stdout)


def test_host_process_serves_a_second_process(
    host_process: tuple[str, Path, subprocess.Popen[str]],
) -> None:
    address, store, proc = host_process
    assert os.stat(address[len("unix:") :]).st_mode & 0o777 == 0o600
    sid = client_process("sessions", "new", "--connect", address)["id"]
    outcome = client_process("sessions", "prompt", sid, "from afar", "--connect", address)
    assert outcome["status"] == "completed"
    assert "from afar" in outcome["reply"]
    client_process("sessions", "prompt", sid, "second", "--connect", address)
    rows = client_process("sessions", "list", "--connect", address)
    assert [(r["id"], r["model"]) for r in rows] == [(sid, "forkwise-offline")]
    child = client_process("sessions", "fork", sid, "--at", "1", "--connect", address)
    events = client_process("sessions", "show", sid, "--connect", address)["events"]
    first_end = next(e["seq"] for e in events if e["type"] == "turn/end")
    assert child["seedLength"] == first_end
    second_user = [e for e in events if e["type"] == "message"][2]["id"]
    cut = client_process(
        "sessions",
        "truncate",
        sid,
        "--message",
        second_user,
        "--exclude-message",
        "--connect",
        address,
    )
    assert cut["through_sequence"] == first_end
    # the store is locked by the host: a command given only the store goes through the host
    assert (store / "host.sock").exists()
    direct = run_json("sessions", "prompt", sid, "direct", "--store", str(store))
    assert direct["status"] == "completed"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(TIMEOUT) == 0
    assert not (store / "host.sock").exists()
    lines = (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
    assert b'"direct"' in lines[1 + first_end + 1]  # the turn after the cut: its user message


def test_tcp_host_needs_the_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    wrong = tmp_path / "wrong"
    wrong.write_text("nope\n")
    with tcp_host(tmp_path / "s", token) as (proc, address):
        code, out, _ = run(
            "sessions", "list", "--connect", address, "--token-file", str(wrong), "--json"
        )
        assert code == 1
        assert orjson.loads(out)["error"]["code"] == "unauthorized"
        assert run_json("--connect", address, "--token-file", str(token), "sessions", "list") == []
    assert proc.returncode == 0


def test_tcp_host_refuses_without_token_and_off_loopback(tmp_path: Path) -> None:
    code, _, err = run("host", "--store", str(tmp_path / "s"), "--listen", "tcp:127.0.0.1:0")
    assert code == 1
    assert "token" in err
    token = tmp_path / "token"
    token.write_text("t")
    code, _, err = run(
        "host",
        "--store",
        str(tmp_path / "s"),
        "--listen",
        "tcp:0.0.0.0:0",
        "--token-file",
        str(token),
    )
    assert code == 1
    assert "non-loopback" in err


def test_connect_is_recognised_before_the_subcommand() -> None:
    assert cli.is_cli_invocation(["--connect", "unix:/x", "sessions", "list"])
    assert cli.is_cli_invocation(["host", "--listen", "unix:/x"])
    assert not cli.is_cli_invocation(["--connect", "unix:/x"])


def test_context_after_an_approved_tool_call(tmp_path: Path) -> None:
    """The next prompt's context: the tool's answer follows the call it answers, and the
    reply that read it closes the turn."""
    store = str(tmp_path / "store")
    (tmp_path / "seen.txt").write_text("x")
    sid = run_json("sessions", "new", "--store", store, "--cwd", str(tmp_path))["id"]
    code, out, _ = run("sessions", "prompt", sid, '/tool list_dir {"path": "."}', "--store", store)
    assert code == 0
    done = run_json("sessions", "approve", sid, out.split("\t")[0], "--store", store)
    made = run_json("sessions", "context", sid, "--store", store)
    roles = [m["role"] for m in made["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    user, call, result, reply = made["messages"]
    assert user["content"] == '/tool list_dir {"path": "."}'
    (tool_call,) = call["tool_calls"]
    assert tool_call["function"]["name"] == "list_dir"
    assert orjson.loads(tool_call["function"]["arguments"]) == {"path": "."}
    assert result["tool_call_id"] == tool_call["id"]
    assert "seen.txt" in result["content"]
    assert reply["content"] == done["reply"]
    assert made["model"]["model"] == "forkwise-offline"


def test_context_larger_than_a_socket_message_comes_in_pages(
    host_process: tuple[str, Path, subprocess.Popen[str]],
) -> None:
    """A long session's context (over 16 MB of JSON, the most a socket message may be)
    reaches a second process whole, page by page, as the library replays it."""
    import random

    from forkwise.core.bench.synth import session_lines
    from forkwise.core.host.wire_codec import MAX_MESSAGE
    from forkwise.core.log.replay import replay
    from forkwise.core.store.backends.jsonl import JsonlBackend
    from forkwise.core.store.session_store import SessionStore

    address, store, _ = host_process
    data = b"\n".join(session_lines(random.Random(5), "long", 50_000)) + b"\n"
    (store / "sessions" / "long.jsonl").write_bytes(data)
    made = client_process("sessions", "context", "long", "--connect", address)
    assert len(orjson.dumps(made["messages"])) > MAX_MESSAGE
    reader = SessionStore(JsonlBackend(store, writable=False))
    try:
        want = replay(list(reader.get("long").events)).transcript
    finally:
        reader.close()
    assert made["messages"] == list(want)
    assert made["model"]["model"] == "offline-echo"


@pytest.mark.asyncio
async def test_context_pages_join_to_the_whole_context(tmp_path: Path) -> None:
    """Pages of at most one message each (maxBytes 1) join to the same context; a page
    says whether more follow."""
    from forkwise.core.client.client import Client
    from forkwise.core.host.host import Host

    host = Host.open(tmp_path / "store")
    client = await Client.in_process(host, follow=False)
    try:
        sid = (await client.create_session("paged", str(tmp_path)))["id"]
        for text in ("one", "two", "three"):
            assert (await client.prompt_and_wait(sid, text))["status"] == "completed"
        whole = await client.context(sid)
        assert [m["role"] for m in whole["messages"]] == ["user", "assistant"] * 3
        assert await client.context(sid, page_bytes=1) == whole
        page = await client.call("session.context", {"sessionId": sid, "after": 4, "maxBytes": 1})
        assert page["messages"] == whole["messages"][4:5]
        assert page["more"] is True
        last = await client.call("session.context", {"sessionId": sid, "after": 5, "maxBytes": 1})
        assert (last["messages"], last["more"]) == (whole["messages"][5:], False)
    finally:
        await client.close()
        await host.close()
