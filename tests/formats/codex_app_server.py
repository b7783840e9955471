"""The real Codex (npm `@openai/codex`, pinned) driven offline for the format tests.

`codex app-server` speaks JSON-RPC over stdio (one JSON object a line, no "jsonrpc" key).
Codex needs a model to run a turn: `FakeResponses` is an OpenAI Responses endpoint on
127.0.0.1 that streams canned answers (a reasoning summary and a text, or an
`exec_command` call when the prompt asks for a tool), and remembers every request, so a
test can see what history Codex sent to the model.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CODEX_VERSION = "0.171.0"


def codex_binary() -> Path:
    """The pinned codex CLI, installed once into a cache folder outside the checkout."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "forkwise-tests" / "npm" / f"codex-{CODEX_VERSION}"
    binary = folder / "node_modules" / ".bin" / "codex"
    if not binary.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"@openai/codex@{CODEX_VERSION}",
            ],
            check=True,
            timeout=300,
            capture_output=True,
        )
    return binary


class FakeResponses:
    """A streaming Responses API on 127.0.0.1 (SSE), answering every request at once."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        counter = itertools.count(1)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(404)
                self.end_headers()

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                owner.requests.append(body)
                data = owner.answer(body, next(counter))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, body: dict[str, Any], n: int) -> bytes:
        items: list[dict[str, Any]] = []
        last = (body.get("input") or [{}])[-1]
        tools = {t.get("name") for t in body.get("tools", [])}
        if last.get("type") == "function_call_output":
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": "The command printed hello."}],
                }
            )
        else:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{n}",
                    "encrypted_content": "gAAAA",
                    "summary": [{"type": "summary_text", "text": f"thinking {n}"}],
                }
            )
            if "use a tool" in json.dumps(last) and "exec_command" in tools:
                items.append(
                    {
                        "type": "function_call",
                        "id": f"fc_{n}",
                        "call_id": f"call_{n}",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": "echo hello"}),
                    }
                )
            else:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "id": f"msg_{n}",
                        "content": [{"type": "output_text", "text": f"Answer {n}."}],
                    }
                )
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 5},
            "total_tokens": 120,
        }
        events = [{"type": "response.created", "response": {"id": f"resp_{n}"}}]
        events += [{"type": "response.output_item.done", "item": item} for item in items]
        events.append(
            {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}}
        )
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def write_config(home: Path, port: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "gpt-fake"\nmodel_provider = "fake"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
    )


class AppServer:
    """`codex app-server` on stdio with CODEX_HOME = `home`."""

    def __init__(self, binary: Path, home: Path, log: Path) -> None:
        env = dict(os.environ, CODEX_HOME=str(home), RUST_LOG="warn")
        self._log = open(log, "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [str(binary), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._ids = itertools.count(1)
        self.notes: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request(
            "initialize",
            {
                "clientInfo": {"name": "forkwise-tests", "version": "0"},
                "capabilities": {"experimentalApi": True},
            },
        )
        self._send({"method": "initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._inbox.put(json.loads(raw))

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _next(self, deadline: float) -> dict[str, Any]:
        message = self._inbox.get(timeout=max(0.05, deadline - time.monotonic()))
        if "method" in message and "id" in message:  # a request to us: decline politely
            self._send({"id": message["id"], "result": {"decision": "decline"}})
        return message

    def request(self, method: str, params: dict[str, Any], timeout: float = 30) -> Any:
        """The result of one call; an error answer raises RuntimeError with its message."""
        rid = next(self._ids)
        self._send({"id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("id") == rid and ("result" in message or "error" in message):
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.notes.append(message)

    def turn(self, thread: str, text: str, timeout: float = 60) -> dict[str, Any]:
        """Run one turn to its end; returns the `turn/completed` params."""
        self.request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            self.notes.append(message)
            params = message.get("params") or {}
            if message.get("method") == "turn/completed" and params.get("threadId") == thread:
                return params

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()
