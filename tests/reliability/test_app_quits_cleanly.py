"""Ctrl+C or SIGTERM on the desktop app closes it like Quit: a running turn ends
interrupted, the store socket goes away and the writer lock is released."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from polling import until

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host

from .conftest import FORKWISE
from .test_two_apps import app_env

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("qasync")

pytestmark = pytest.mark.gui
DEADLINE = 30.0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.asyncio
async def test_signal_closes_the_app_and_interrupts_its_turn(
    store: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    app = subprocess.Popen([FORKWISE, "--store", str(store)], env=app_env(tmp_path),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sock = store / "host.sock"
        # another process: nothing to await but the file
        await until(lambda: sock.exists() or app.poll() is not None, DEADLINE,
                    "the app to serve its store")
        assert app.poll() is None, app.communicate()[1]
        client = await Client.connect(f"unix:{sock}")
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_note(note: dict[str, Any]) -> None:
            if note["kind"] == "session/delta" and not started.done():
                started.set_result(None)

        try:
            await client.subscribe(on_note)
            sid = (await client.create_session(title="interrupted"))["id"]
            await client.prompt(sid, "/slow " + "word " * 400)
            await asyncio.wait_for(started, DEADLINE)  # the turn is streaming
        finally:
            await client.close()
        app.send_signal(sig)
        _out, err = app.communicate(timeout=DEADLINE)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, err
    assert "Traceback" not in err
    assert not sock.exists()
    lines = (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    assert (last["type"], last["status"]) == ("turn/end", "interrupted")
    host = Host.open(store)  # the writer lock was released
    await host.close()
