"""A remote client: a real `forkwise host --listen tcp:127.0.0.1:PORT` process and a
client holding its token that tries every method taking a path on the host's machine.

A token lets a client use the host's sessions, not its user's files: each attempt is
refused with a stable code (`remote-path-refused`, `remote-endpoint-refused`) and leaves
the host user's files as they were.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from host_process import tcp_host
from polling import wait_until

from tests.reliability.conftest import child_env

TIMEOUT = 10.0
TOKEN = "remote-token-0123456789"
SECRET = "the host user's secret 7f3a"
KEY = "sk-host-key-bound-to-its-endpoint"
ENDPOINT = "http://127.0.0.1:9/v1"


class RawClient:
    """JSON lines over a socket, each answer awaited with a deadline (a hang fails)."""

    def __init__(self, address: str) -> None:
        _, host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        self.file = self.sock.makefile("rb")
        self.ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """The response to one request (notifications in between are skipped)."""
        rid = next(self.ids)
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = self.file.readline()
            assert line, f"the host hung up on {method}"
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == rid:
                return answer
        raise AssertionError(f"no answer to {method} within {TIMEOUT} s")

    def ok(self, method: str, **params: Any) -> Any:
        answer = self.call(method, **params)
        assert "error" not in answer, (method, answer)
        return answer["result"]

    def refused(self, method: str, **params: Any) -> str:
        """The stable code of the error `method` answers with (it must fail)."""
        answer = self.call(method, **params)
        assert "error" in answer, (method, answer)
        code: str = answer["error"]["data"]["code"]
        return code

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture
def remote(store: Path) -> Iterator[tuple[RawClient, Path]]:
    """A client logged in to a host process whose user has an API key in the environment
    for the endpoint its settings name, a session of its own working in `/`, and a
    secret file; the client and the folder holding the store."""
    root = store.parent
    config = root / "config"
    config.mkdir(mode=0o700)
    settings = {"provider": {"kind": "openai", "base_url": ENDPOINT, "model": "m"}}
    (config / "settings.json").write_text(json.dumps(settings))
    (root / "secret.txt").write_text(SECRET)
    env = child_env(FORKWISE_CONFIG_DIR=str(config), FORKWISE_API_KEY=KEY)
    made = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", "sessions", "new", "--store", str(store),
         "--id", "mine", "--cwd", "/", "--json"],
        capture_output=True, timeout=TIMEOUT * 3, env=env, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = root / "token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    with tcp_host(store, token, env) as (_, address):
        client = RawClient(address)
        try:
            client.ok("host.hello", token=TOKEN)
            yield client, root
        finally:
            client.close()


def approval_of(client: RawClient, sid: str) -> str:
    """The id of the approval the session's running turn waits for."""

    def asked() -> list[str]:
        events = client.ok("session.events", sessionId=sid)["events"]
        return [str(e["approval"]) for e in events if e["type"] == "approval/request"]

    return wait_until(asked, TIMEOUT, f"session {sid} to ask for an approval")[-1]


def test_a_remote_client_names_no_working_folder(remote: tuple[RawClient, Path]) -> None:
    client, root = remote
    assert client.refused("session.create", cwd="/") == "remote-path-refused"
    assert client.refused("session.create", cwd=str(root)) == "remote-path-refused"
    # without one, its session works in a fresh folder the host made under its store
    made = client.ok("session.create", title="remote")
    cwd = client.ok("session.get", sessionId=made["id"])["header"]["cwd"]
    assert Path(cwd).parent == root / "store" / "remote-workspaces", cwd
    assert os.listdir(cwd) == []
    assert (os.stat(cwd).st_mode & 0o777) == 0o700


def test_a_remote_client_reads_no_file_of_the_host_user(remote: tuple[RawClient, Path]) -> None:
    """A scripted read_file it approves itself: outside its own session's folder the tool
    refuses, and in a session of the host's user (cwd `/`) the approval is refused."""
    client, root = remote
    secret = str(root / "secret.txt")
    script = "/tool read_file " + json.dumps({"path": secret})
    sid = client.ok("session.create")["id"]
    client.ok("session.setModel", sessionId=sid, provider="offline", model="forkwise-offline")
    client.ok("session.prompt", sessionId=sid, text=script)
    outcome = client.ok(
        "session.approve", sessionId=sid, approvalId=approval_of(client, sid), wait=True
    )
    assert outcome is not None
    shown = json.dumps(client.ok("session.events", sessionId=sid))
    assert "outside the session directory" in shown
    assert SECRET not in shown

    client.ok("session.setModel", sessionId="mine", provider="offline", model="forkwise-offline")
    client.ok("session.prompt", sessionId="mine", text=script)
    asked = approval_of(client, "mine")
    code = client.refused("session.approve", sessionId="mine", approvalId=asked, wait=True)
    assert code == "remote-path-refused"
    assert SECRET not in json.dumps(client.ok("session.events", sessionId="mine"))
    # refusing (approved: false) is still the client's to say
    client.ok("session.approve", sessionId="mine", approvalId=asked, approved=False, wait=True)


def test_a_remote_client_imports_no_path(remote: tuple[RawClient, Path]) -> None:
    client, root = remote
    folder = root / "elsewhere"
    folder.mkdir()
    (folder / "x.jsonl").write_text('{"type":"session","version":1}\n')
    for paths in ([str(folder)], [str(folder / "x.jsonl")], ["/etc/passwd"]):
        assert client.refused("session.import", paths=paths) == "remote-path-refused"
    before = {r["id"] for r in client.ok("session.list")}
    assert before == {"mine"}


def test_a_remote_client_exports_to_no_path(remote: tuple[RawClient, Path]) -> None:
    client, root = remote
    target = root / "secret.txt"
    for tool in ("claude", "codex", "pi"):
        code = client.refused("session.export", sessionId="mine", tool=tool, out=str(target))
        assert code == "remote-path-refused", tool
    assert target.read_text() == SECRET


def test_a_remote_client_writes_no_document_on_the_host(remote: tuple[RawClient, Path]) -> None:
    """A document export goes to the named file or else to the host's current folder:
    either is the host user's, so a remote client gets neither."""
    client, root = remote
    host_cwd = {p.name for p in Path.cwd().iterdir()}
    for kind in ("markdown", "html"):
        code = client.refused("session.export", sessionId="mine", tool=kind)
        assert code == "remote-path-refused", kind
        code = client.refused("session.export", sessionId="mine", tool=kind,
                              out=str(root / f"doc.{kind}"))
        assert code == "remote-path-refused", kind
    assert not list(root.glob("doc.*"))
    assert {p.name for p in Path.cwd().iterdir()} == host_cwd  # the host's folder (inherited)
    assert not any(Path.cwd().glob("mine.*"))


def test_a_remote_client_moves_no_keyed_endpoint(remote: tuple[RawClient, Path]) -> None:
    """The environment's key is the host user's, bound to the endpoint of its settings: a
    token holder that points `base_url` at its own server would receive it."""
    client, root = remote
    saved = (root / "config" / "settings.json").read_bytes()
    for url in ("http://127.0.0.1:8/v1", ""):
        values = {"kind": "openai", "base_url": url, "model": "m"}
        assert client.refused("settings.save", values=values) == "remote-endpoint-refused"
        code = client.refused("settings.save", values=values, apiKey="sk-client")
        assert code == "remote-endpoint-refused"
    assert (root / "config" / "settings.json").read_bytes() == saved
    assert client.ok("settings.get")["base_url"] == ENDPOINT
    # the same endpoint with another model is the client's to choose
    values = {"kind": "openai", "base_url": ENDPOINT + "/", "model": "other"}
    assert client.ok("settings.save", values=values)["model"] == "other"


def test_a_remote_client_lists_no_models_with_the_hosts_key_elsewhere(
    remote: tuple[RawClient, Path],
) -> None:
    """Listing a vendor's models at a URL of the client's choosing would send the host's
    key there: refused, unless the client brings its own key."""
    client, root = remote
    saved = (root / "config" / "settings.json").read_bytes()
    code = client.refused("settings.listModels", vendor="compatible",
                          baseUrl="http://127.0.0.1:8/v1")
    assert code == "remote-endpoint-refused"
    code = client.refused("settings.listModels", vendor="compatible",
                          baseUrl="http://127.0.0.1:8/v1", apiKey="sk-the-clients-own")
    assert code == "provider-error"  # asked with its own key: nothing listens there
    assert (root / "config" / "settings.json").read_bytes() == saved


def test_the_cli_over_tcp_creates_where_the_host_says(
    remote: tuple[RawClient, Path], store: Path
) -> None:
    """`sessions new --connect tcp:…` names no folder of its own machine unless told to;
    told to, the host refuses it by code."""
    client, root = remote
    address = f"tcp:{client.sock.getpeername()[0]}:{client.sock.getpeername()[1]}"
    base = [sys.executable, "-m", "forkwise.core.cli", "sessions", "new", "--connect", address,
            "--token-file", str(root / "token"), "--json"]  # fmt: skip
    made = subprocess.run(base, capture_output=True, timeout=TIMEOUT * 3, check=False)
    assert made.returncode == 0, made.stderr
    sid = json.loads(made.stdout)["id"]
    cwd = client.ok("session.get", sessionId=sid)["header"]["cwd"]
    assert Path(cwd).parent == store / "remote-workspaces"
    told = subprocess.run(
        [*base, "--cwd", "/"], capture_output=True, timeout=TIMEOUT * 3, check=False
    )
    assert told.returncode == 1
    assert json.loads(told.stdout)["error"]["code"] == "remote-path-refused"


def test_a_request_naming_its_method_twice_is_refused(remote: tuple[RawClient, Path]) -> None:
    """Which of two `"method"` members runs was the decoder's choice (the last): a proxy
    or log reading the first saw `session.list` where the host deleted a session."""
    client, _ = remote
    raw = (
        b'{"jsonrpc":"2.0","id":7,"method":"session.list","method":"session.delete",'
        b'"params":{"sessionId":"mine"}}\n'
    )
    client.sock.sendall(raw)
    answer = json.loads(client.file.readline())
    assert answer["id"] == 7
    assert answer["error"]["data"]["code"] == "rpc-error"
    assert "'method' twice" in answer["error"]["message"]
    assert [r["id"] for r in client.ok("session.list")] == ["mine"]


def test_a_connection_that_has_not_logged_in_buffers_little(
    remote: tuple[RawClient, Path],
) -> None:
    """A connection that never says hello may send a line of a login's size, not of a
    request's: 1 MB without a newline is refused at once (it was buffered up to 16 MB
    until the login timeout, 10 s)."""
    client, _ = remote
    _, host, port = client.sock.getpeername()[0], *client.sock.getpeername()
    stranger = socket.create_connection((str(host), int(port)), timeout=TIMEOUT)
    try:
        stranger.settimeout(3.0)
        started = time.monotonic()
        try:  # refused while it still sends: the reply, or a reset with it
            stranger.sendall(b"x" * (1 << 20))
            line = stranger.makefile("rb").readline()
        except (ConnectionResetError, BrokenPipeError):
            line = b""
        assert time.monotonic() - started < 3.0
        if line:
            assert "larger than 65536 bytes" in json.loads(line)["error"]["message"], line
    finally:
        stranger.close()
    # a client that logged in sends requests of any size up to the message limit
    assert client.refused("session.search", query="x" * 200_000) == "query-too-long"
