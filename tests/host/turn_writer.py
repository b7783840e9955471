"""A host to be killed while it runs turns: `python turn_writer.py STORE ROUND`.

It opens a host on the store (which closes the turns an earlier kill left open), then runs
offline turns through an in-process client on a few sessions at once, forever. It prints
`{"ack": …, "session": …, "turn": …}` only after `prompt_and_wait` returned the turn
completed: the turns the harness may hold the store to. Used by test_turn_crash.py.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson

from forkwise.core.client.client import Client
from forkwise.core.host.host import Host

SESSIONS = 3


def say(record: dict[str, object]) -> None:
    sys.stdout.buffer.write(orjson.dumps(record) + b"\n")
    sys.stdout.buffer.flush()


async def main(root: Path, round_no: int) -> None:
    host = Host.open(root)
    client = await Client.in_process(host)
    ids = [(await client.create_session(f"r{round_no} s{i}"))["id"] for i in range(SESSIONS)]
    say({"ready": ids})

    async def run(sid: str) -> None:
        n = 0
        while True:
            n += 1
            text = f"r{round_no} {sid} q{n}"
            outcome = await client.prompt_and_wait(sid, text)
            if outcome["status"] != "completed":
                raise RuntimeError(f"turn ended {outcome['status']}: {outcome.get('error')}")
            say({"ack": text, "session": sid, "turn": outcome["turn"]})

    await asyncio.gather(*(run(sid) for sid in ids))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
