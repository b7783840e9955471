"""Turns through the host and a client, SIGKILLed at random moments: every turn whose
outcome the client received is on disk whole (its prompt, reply and end), and the store
opens with every session readable. The turns' openings are held back and written with
their ends (runtime/held_drafts.py), so this is what an acknowledgement promises."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from forkwise.core.store.opening import open_backend
from forkwise.core.store.session_store import SessionStore

WRITER = Path(__file__).with_name("turn_writer.py")
KILLS = int(os.environ.get("FORKWISE_TURN_KILLS", "8"))


def turns_on_disk(root: Path) -> dict[str, dict[str, list[str]]]:
    """Per session, per turn id: the types of its events and the texts of its messages."""
    store = SessionStore(open_backend(root))
    try:
        out: dict[str, dict[str, list[str]]] = {}
        for sid in store.ids():
            turns: dict[str, list[str]] = {}
            for e in store.get(sid).events:  # raises on anything but a torn tail
                turn = e.get("turn")
                if isinstance(turn, str):
                    entry = e.type
                    if e.type == "message":
                        entry += ":" + "".join(p.get("text", "") for p in e.get("parts"))
                    elif e.type == "turn/end":
                        entry += ":" + str(e.get("status"))
                    turns.setdefault(turn, []).append(entry)
            out[sid] = turns
        return out
    finally:
        store.close()


def test_sigkill_during_turns_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("FORKWISE_CRASH_SEED", "20260101")))
    root = tmp_path / "store"
    acked: list[dict[str, str]] = []
    errors_path = tmp_path / "writer.err"
    deadline = time.monotonic() + 30 * KILLS
    for round_no in range(KILLS):
        assert time.monotonic() < deadline, f"too slow: {round_no} kills"
        with errors_path.open("wb") as errors:
            proc = subprocess.Popen(
                [sys.executable, str(WRITER), str(root), str(round_no)],
                stdout=subprocess.PIPE,
                stderr=errors,
            )
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            assert b"ready" in ready, errors_path.read_text()
            want = rng.choice([1, 2, 5, 13, 40])
            lines: list[bytes] = []
            while sum(b'"ack"' in x for x in lines) < want:
                line = proc.stdout.readline()
                assert line.endswith(b"\n"), errors_path.read_text()
                lines.append(line)
            time.sleep(rng.random() * rng.choice([0.0005, 0.003, 0.02]))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            lines += proc.stdout.read().split(b"\n")
            proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL, errors_path.read_text()
        acked += [orjson.loads(x) for x in lines if x.endswith(b"}") and b'"ack"' in x]
        disk = turns_on_disk(root)
        for ack in acked:
            turn = disk[ack["session"]].get(ack["turn"])
            assert turn is not None, ack
            assert turn[:3] == ["turn/start", f"message:{ack['ack']}", "step/start"], turn
            assert turn[3].startswith("message:"), turn
            assert ack["ack"] in turn[3], turn
            assert turn[4:] == ["step/end", "turn/end:completed"], turn
    assert len(acked) >= KILLS
    print(f"\nturn crash harness: {KILLS} kills, {len(acked)} acknowledged turns, all whole")
