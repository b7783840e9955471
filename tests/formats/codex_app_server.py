"""The real Codex (npm `@openai/codex`, pinned) driven offline for the format tests.

The installer and the `codex app-server` client are the benchmark's
(forkwise.core.bench.app_server). Codex needs a model to run a turn: `FakeResponses` is an
OpenAI Responses endpoint on 127.0.0.1 that streams canned answers (a reasoning summary and a text, or an
`exec_command` call when the prompt asks for a tool), and remembers every request, so a
test can see what history Codex sent to the model.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from forkwise.core.bench.app_server import CODEX_VERSION, AppServer, install_codex

__all__ = ["CODEX_VERSION", "AppServer", "FakeResponses", "codex_binary", "write_config"]


def codex_binary() -> Path:
    """The pinned codex CLI, installed once into the tests' cache folder outside the checkout."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return install_codex(cache / "forkwise-tests" / "npm")


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
