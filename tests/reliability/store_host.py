"""A real writer process for the two-process tests: it opens the store (taking the writer
lock), serves it on the store socket as the desktop app does, and writes turns itself.

    python store_host.py STORE PROMPTS

Prints `ready SESSION_ID` once the socket is served; on a line `go` on stdin it runs
PROMPTS turns `host-<i>` on that session and prints `wrote N`; at stdin's end it closes
(releasing socket and lock) and prints `closed`.
"""

from __future__ import annotations

import asyncio
import sys

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host
from forkwise.core.host.shared_store import StoreEndpoint


async def main(store: str, prompts: int) -> int:
    host = Host.open(store, default_cwd=store)
    endpoint = await StoreEndpoint.start(host, store)
    assert endpoint is not None, "the store socket could not be served"
    client = await Client.in_process(host)
    loop = asyncio.get_running_loop()
    try:
        sid = (await client.create_session("host session"))["id"]
        print(f"ready {sid}", flush=True)
        while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
            if line == "go":
                for i in range(prompts):
                    outcome = await client.prompt_and_wait(sid, f"host-{i}")
                    assert outcome["status"] == "completed", outcome
                print(f"wrote {prompts}", flush=True)
    finally:
        await client.close()
        await endpoint.close()
        await host.close()
    print("closed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], int(sys.argv[2]))))
