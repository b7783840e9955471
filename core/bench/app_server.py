"""The real Codex (npm `@openai/codex`, pinned) and a client of its `codex app-server`.

Shared by the `--peers` benchmark and the Codex format tests: both install the pinned
package from the npm registry into a cache folder outside the checkout on first use, and
both talk to `codex app-server`, which speaks JSON-RPC over stdio (one JSON object a line,
no "jsonrpc" key). Listing, reading, resuming and forking threads need no model.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import orjson

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"


def npm_install(folder: Path, spec: str) -> None:
    """`npm install spec` into `folder` (its own node_modules), bounded in time."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), spec],
        check=True,
        timeout=300,
        capture_output=True,
    )


def install_codex(cache: Path) -> Path:
    """The pinned codex CLI under `cache` (a folder of npm installs), installed on first use."""
    folder = cache / f"codex-{CODEX_VERSION}"
    binary = folder / "node_modules" / ".bin" / "codex"
    if not binary.exists():
        npm_install(folder, f"{CODEX_PACKAGE}@{CODEX_VERSION}")
    return binary


class AppServer:
    """`codex app-server` on stdio with CODEX_HOME = `home`, initialized.

    Every wait is bounded by a timeout; `close` ends the process (terminate, then kill).
    `answered_at` is the `time.perf_counter()` at which the last answer's line arrived,
    before it was decoded, so a benchmark can leave this client's decoding out."""

    def __init__(self, binary: Path, home: Path, log: Path, client: str = "forkwise") -> None:
        env = dict(os.environ, CODEX_HOME=str(home), RUST_LOG="warn")
        self._log: IO[bytes] = open(log, "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [str(binary), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self._inbox: queue.Queue[tuple[float, bytes]] = queue.Queue()
        self._ids = itertools.count(1)
        self.notes: list[dict[str, Any]] = []
        self.answered_at = 0.0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self.request(
                "initialize",
                {
                    "clientInfo": {"name": client, "version": "0"},
                    "capabilities": {"experimentalApi": True},
                },
            )
            self._send({"method": "initialized"})
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        stdout = self.proc.stdout
        if stdout is None:
            return
        for raw in stdout:
            self._inbox.put((time.perf_counter(), raw))

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            raise RuntimeError("codex app-server has no stdin")
        stdin.write(orjson.dumps(message) + b"\n")
        stdin.flush()

    def _next(self, deadline: float) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("codex app-server did not answer in time")
        try:
            at, raw = self._inbox.get(timeout=left)
        except queue.Empty:
            code = self.proc.poll()
            raise TimeoutError(f"codex app-server did not answer in time (exit {code})") from None
        message: dict[str, Any] = orjson.loads(raw)
        if "method" in message and "id" in message:  # a request to us: decline politely
            self._send({"id": message["id"], "result": {"decision": "decline"}})
        elif "id" in message:
            self.answered_at = at
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
        return self.turn_completed(thread, timeout)

    def turn_completed(self, thread: str, timeout: float = 60) -> dict[str, Any]:
        """Wait for the running turn of `thread` (a prompt's, or one a request such as
        `thread/compact/start` began) to end; its `turn/completed` params."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            self.notes.append(message)
            params = message.get("params") or {}
            if message.get("method") == "turn/completed" and params.get("threadId") == thread:
                return dict(params)

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):  # the server may be gone already
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
