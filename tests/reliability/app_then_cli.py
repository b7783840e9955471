"""Runs the real desktop app on STORE; once it serves the store socket, a separate
`forkwise` process writes through it; then the window closes.

    python app_then_cli.py STORE     # prints: served, the CLI turn's status, gone
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.host import shared_store
from forkwise.gui.app import app

FORKWISE = str(Path(sys.executable).with_name("forkwise"))
store = Path(sys.argv[1])
original = shared_store.StoreEndpoint.start
driver: list[asyncio.Task[None]] = []


def cli(*argv: str) -> Any:
    done = subprocess.run(
        [FORKWISE, *argv, "--store", str(store), "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return orjson.loads(done.stdout)


async def drive() -> None:
    from PySide6.QtWidgets import QApplication

    try:
        print("served", flush=True)
        sid = (await asyncio.to_thread(cli, "sessions", "new"))["id"]
        outcome = await asyncio.to_thread(cli, "sessions", "prompt", sid, "through the app")
        print(outcome["status"], flush=True)
    finally:
        QApplication.closeAllWindows()


async def start(host: Any, store_dir: Any) -> Any:
    endpoint = await original(host, store_dir)
    assert endpoint is not None
    driver.append(asyncio.get_running_loop().create_task(drive()))
    return endpoint


shared_store.StoreEndpoint.start = start  # type: ignore[method-assign, assignment]
status = app.run(store, None, None)
assert driver, "the app never served its store"
assert driver[0].done()
assert driver[0].exception() is None
if not (store / "host.sock").exists():
    print("gone", flush=True)
sys.exit(status)
