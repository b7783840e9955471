"""A store writer to be killed: `python crash_writer.py STORE SEED`.

It appends turns, forks, truncates and deletes on a store forever, seeded (STORE: a JSONL
folder or a postgresql:// URL). Before each
operation it prints `{"begin": n, …what it will do…}`; only after the operation returned
does it print `{"ack": n}`. Every appended event carries a unique key `k`, so the harness
can tell each acknowledged event on disk apart. Used by test_crash.py.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import orjson

from forkwise.core.store.opening import open_backend
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore


def say(record: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(record) + b"\n")
    sys.stdout.buffer.flush()


def safe_boundaries(session: Session) -> list[int]:
    out, open_ = [0], False
    for e in session.events:
        if e.type == "turn/start":
            open_ = True
        elif e.type == "turn/end":
            open_ = False
        if not open_:
            out.append(e.seq)
    return out


def main(root: str, seed: int) -> None:
    rng = random.Random(seed)
    store = SessionStore(open_backend(root))
    n = 0
    counter = 0

    def key() -> str:
        nonlocal counter
        counter += 1
        return f"{seed}.{counter}"

    while True:
        n += 1
        ids = store.ids()
        roll = rng.random()
        if not ids or roll < 0.08:
            sid = f"s{seed}-{n}"
            say({"begin": n, "op": "create", "sid": sid})
            store.create(sid, cwd="/crash")
            say({"ack": n})
            continue
        sid = rng.choice(ids)
        session = store.get(sid)
        open_turn = session.replay().open_turn
        if open_turn is not None:  # a batch cut short by an earlier kill: close its turn
            drafts = [{"type": "turn/end", "turn": open_turn, "status": "interrupted"}]
            roll = 0.0
        elif roll < 0.55:
            t = f"t{key()}"
            drafts = [
                {"type": "turn/start", "turn": t},
                {"type": "message", "turn": t, "id": f"user:{t}:q", "role": "user",
                 "parts": [{"type": "text", "text": "question"}]},
                {"type": "message", "turn": t, "id": f"assistant:{t}:a", "role": "assistant",
                 "parts": [{"type": "text", "text": "answer " * rng.randint(1, 200)}]},
                {"type": "turn/end", "turn": t, "status": "completed"},
            ]  # fmt: skip
        elif roll < 0.62:
            size = rng.choice([100_000, 1_000_000])  # big writes may be cut by the kill
            drafts = [{"type": "plugin/crash/blob", "blob": "x" * size}]
        elif roll < 0.80:
            b = rng.choice(safe_boundaries(session))
            child = f"{sid[:30]}.f{seed}-{n}"
            say({"begin": n, "op": "fork", "src": sid, "b": b, "child": child})
            store.fork(sid, b, child)
            say({"ack": n})
            continue
        elif roll < 0.86 and len(ids) > 12:
            say({"begin": n, "op": "delete", "sid": sid})
            store.delete(sid)
            say({"ack": n})
            continue
        elif roll < 0.93:
            b = rng.choice(safe_boundaries(session))
            say({"begin": n, "op": "truncate", "sid": sid, "b": b})
            store.truncate(sid, b)
            say({"ack": n})
            continue
        else:
            say({"begin": n, "op": "list"})
            store.list()
            say({"ack": n})
            continue
        for d in drafts:
            d["k"] = key()
        say({"begin": n, "op": "append", "sid": sid, "keys": [d["k"] for d in drafts]})
        store.append(sid, drafts)
        say({"ack": n})


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
