"""Host figures: sustained offline turns through the real host and client, durable; and
the first prompt on a long session.

Several sessions run turns at once, as a busy person's workspace would; every append the
agents make is fsynced before it returns. Baseline: raw `write` + `fsync` of the same
bytes, one batch per append the host made.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host


async def _turns(root: Path, sessions: int, turns: int) -> tuple[float, int, list[bytes]]:
    host = Host.open(root)
    client = await Client.in_process(host)
    try:
        ids = [(await client.create_session(title=f"bench {i}"))["id"] for i in range(sessions)]

        async def run(sid: str) -> None:
            for t in range(turns):
                outcome = await client.prompt_and_wait(sid, f"question {t} about the build")
                if outcome["status"] != "completed":
                    raise RuntimeError(f"turn ended {outcome['status']}: {outcome.get('error')}")

        start = time.perf_counter()
        await asyncio.gather(*(run(sid) for sid in ids))
        took = time.perf_counter() - start
    finally:
        await client.close()
        await host.close()
    lines = []
    for sid in ids:
        lines.extend((root / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()[2:])
    return took, len(lines), lines


def run_host_turns(tmp: Path, sessions: int, turns: int) -> tuple[float, float, int]:
    """Returns (seconds through the host, seconds for the raw baseline, events written)."""
    root = Path(tempfile.mkdtemp(dir=tmp))
    took, events, lines = asyncio.run(_turns(root, sessions, turns))
    # the baseline writes the same bytes with the same number of fsyncs per event as the
    # host needed at best: one per turn and session (a perfect group commit per turn)
    per_turn = max(1, events // (sessions * turns))
    batches = [b"\n".join(lines[i : i + per_turn]) + b"\n" for i in range(0, events, per_turn)]
    fd = os.open(Path(tempfile.mkdtemp(dir=tmp)) / "raw.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
    start = time.perf_counter()
    for batch in batches:
        os.write(fd, batch)
        os.fsync(fd)
    raw = time.perf_counter() - start
    os.close(fd)
    return took, raw, events


FIRST_DELTA_SNIPPET = """
import asyncio, sys, time
from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
async def main():
    host = Host.open(sys.argv[1])
    client = await Client.in_process(host)
    first = asyncio.get_running_loop().create_future()
    def on_note(note):
        if note.get("kind") == "session/delta" and not first.done():
            first.set_result(time.monotonic())
    await client.subscribe(on_note)
    try:
        turn = asyncio.ensure_future(client.prompt_and_wait("big", "and one more question"))
        seen = await asyncio.wait_for(first, 300)
        outcome = await asyncio.wait_for(turn, 300)
        assert outcome["status"] == "completed", outcome
    finally:
        await client.close()
        await host.close()
    print(seen)
asyncio.run(main())
"""


def first_delta(root: Path) -> float:
    """Seconds from starting a fresh process (an app's host and client on the store) to
    the first streamed text of a prompt on session "big"."""
    import subprocess
    import sys

    from forkwise.core.bench import process_env

    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", FIRST_DELTA_SNIPPET, str(root)],
        check=True,
        env=process_env(),
        capture_output=True,
        text=True,
    ).stdout
    return float(out.strip().splitlines()[-1]) - start
