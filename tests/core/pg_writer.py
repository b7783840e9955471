"""One of several hosts writing to one PostgreSQL store: `python pg_writer.py URL N SID…`.

It appends N single-event batches round-robin to the sessions named, each over its own
store (its own connection). After each append returned it prints `SID SEQ`; when the store
refuses a session it prints `SID CODE` and leaves that session alone. Then it prints `done`
and keeps its connection (and the sessions it writes) until a line comes on stdin. Used by
test_postgres_store.py."""

from __future__ import annotations

import os
import sys

from forkwise.core.errors import ForkwiseError
from forkwise.core.store.backends.postgres import PostgresBackend
from forkwise.core.store.session_store import SessionStore


def main(url: str, n: int, sids: list[str]) -> None:
    store = SessionStore(PostgresBackend(url))
    live = list(sids)
    for i in range(n):
        if not live:
            break
        sid = live[i % len(live)]
        try:
            events = store.append(sid, [{"type": "plugin/test/tick", "i": i, "pid": os.getpid()}])
        except ForkwiseError as exc:
            print(sid, exc.code, flush=True)
            live.remove(sid)
            continue
        print(sid, events[-1].seq, flush=True)
    # stay the writer of its sessions until told to go: the others meet it there
    print("done", flush=True)
    sys.stdin.readline()
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
